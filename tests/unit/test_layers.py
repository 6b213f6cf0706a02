"""Layers point one way (docs/architecture.md): each rule below reads the imports of every
module of a room and fails naming the module and the import that breaks it."""
import ast
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def imports(path: Path) -> set[str]:
    """The modules ``path`` imports (``from a.b import c`` counts as ``a.b``)."""
    tree = ast.parse(path.read_text())
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out.add(node.module)
            if node.module in ("advisor", "advisor.adapters"):  # from advisor import x
                out |= {f"{node.module}.{a.name}" for a in node.names}
    return out


def ours(name: str) -> bool:
    return name.split(".")[0] in ("advisor", "tests") and \
        name not in ("advisor", "advisor.adapters")


def modules(*rooms: str):
    for room in rooms:
        base = ROOT / room
        yield from sorted(base.glob("*.py") if base.is_dir() else [base.with_suffix(".py")])


def allowed(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


RULES = [
    # (rooms, what their modules of ours may import)
    (("advisor/engine",), ("advisor.engine", "advisor.model", "advisor.errors")),
    (("advisor/model", "advisor/errors", "advisor/units"), ("advisor.model", "advisor.errors")),
    (("advisor/settings",), ("advisor.errors", "advisor.plugins.spec")),
    (("advisor/plugins",), ("advisor.plugins", "advisor.engine", "advisor.model",
                            "advisor.errors", "advisor.units", "advisor.settings")),
    (("policies",), ("advisor.plugins",)),   # installed as advisor.policies
    (("advisor/whatif", "advisor/studies", "advisor/views", "advisor/metrics",
      "advisor/cleaning"),
     ("advisor.whatif", "advisor.studies", "advisor.views", "advisor.plugins", "advisor.engine",
      "advisor.model", "advisor.errors", "advisor.units", "advisor.metrics",
      "advisor.cleaning", "advisor.settings")),
    (("adapters",), ("advisor.adapters", "advisor.model", "advisor.errors", "advisor.cleaning",
                     "advisor.whatif.slurmconf")),
]


@pytest.mark.parametrize("rooms, may", RULES, ids=[", ".join(r[0]) for r in RULES])
def test_imports_point_down(rooms, may):
    wrong = [f"{path.relative_to(ROOT)} imports {name}"
             for path in modules(*rooms) for name in sorted(imports(path))
             if ours(name) and not allowed(name, may)]
    assert not wrong, "; ".join(wrong)


def test_the_library_reaches_policies_only_through_the_registry():
    """No module of advisor/ names a built-in plugin module: a family is found, not named."""
    wrong = [str(p.relative_to(ROOT)) for p in (ROOT / "advisor").rglob("*.py")
             if any(allowed(n, ("advisor.policies",)) for n in imports(p))]
    assert not wrong
