"""The core names no policy family (docs/architecture.md): the engine's ``run``, the what-if
layer, the plugin seam and the CLI hold no family's name, in an identifier or in a string,
so that a family is added, changed or removed in its own folder alone. The model's own
vocabulary is not a family's: ``config.backfill`` is Slurm's SchedulerParameters."""
from __future__ import annotations

import ast
import dataclasses
import io
import re
import tokenize
from pathlib import Path

from advisor import model
from advisor.engine import EngineConfig
from advisor.plugins.registry import registry

ROOT = Path(__file__).resolve().parents[2]
CORE = ("advisor/whatif/*.py", "advisor/plugins/*.py", "advisor/cli*.py")


def _model_fields() -> set[str]:
    return {f.name for obj in vars(model).values()
            if isinstance(obj, type) and dataclasses.is_dataclass(obj)
            for f in dataclasses.fields(obj)}


def _docstrings(tree: ast.AST) -> set[int]:
    """The lines docstrings start on (they may say which families exist, as examples)."""
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {n.body[0].lineno for n in ast.walk(tree) if isinstance(n, kinds) and n.body
            and isinstance(n.body[0], ast.Expr) and isinstance(n.body[0].value, ast.Constant)
            and isinstance(n.body[0].value.value, str)}


def family_names(source: str, families: set[str], first_line: int = 1) -> list[str]:
    """Where ``source`` names one of ``families``: an identifier one of whose words is a
    family's name (``plan_study``, ``BACKFILL``), unless it is an attribute that is a
    model field; a string (not a docstring) holding a family's name as a word."""
    tree = ast.parse(source)
    docs, fields = _docstrings(tree), _model_fields()
    words = re.compile(r"\b(" + "|".join(sorted(families)) + r")\b", re.IGNORECASE)
    found, previous = [], None
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        line = tok.start[0] + first_line - 1
        if tok.type == tokenize.NAME:
            attribute = previous is not None and previous.string == "."
            if set(tok.string.lower().split("_")) & families and not (
                    attribute and tok.string in fields):
                found.append(f"{line}: {tok.string}")
        elif tok.type == tokenize.STRING and tok.start[0] not in docs:
            if words.search(tok.string):
                found.append(f"{line}: {tok.string[:60]}")
        if tok.type not in (tokenize.NL, tokenize.COMMENT):
            previous = tok
    return found


def test_the_finder_finds_a_family_where_it_is_named():
    families = {"plan", "queues"}
    assert family_names('if config.plan:\n    x = "queues/runtime"\n', families) == \
        ["1: plan", "2: \"queues/runtime\""]
    assert family_names('"""A plan."""\nplans = config.backfill\n', {"backfill"}) == []


def test_the_core_names_no_family():
    families = {f.name for f in registry().families}
    assert {"plan", "queues", "timeshare"} <= families
    found = []
    for pattern in CORE:
        for path in sorted(ROOT.glob(pattern)):
            found += [f"{path.relative_to(ROOT)}:{hit}"
                      for hit in family_names(path.read_text(), families)]
    # the compiled core's own settings (EngineConfig's fields: its backfilling, its
    # threshold) are the engine's vocabulary; no other family may be named in its run
    core = families - {f.name for f in dataclasses.fields(EngineConfig)}
    engine = (ROOT / "advisor/engine/__init__.py").read_text()
    run = next(n for n in ast.parse(engine).body
               if isinstance(n, ast.FunctionDef) and n.name == "run")
    found += [f"advisor/engine/__init__.py run:{hit}" for hit in family_names(
        ast.get_source_segment(engine, run), core, run.lineno)]
    assert not found, "; ".join(found)
