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
    """The modules of each room: a folder's own (not its subfolders'), a module, or
    ``policies/*/name``: that module of every family folder."""
    for room in rooms:
        if "*" in room:
            yield from sorted(ROOT.glob(room + ".py"))
            continue
        base = ROOT / room
        yield from sorted(base.glob("*.py") if base.is_dir() else [base.with_suffix(".py")])


def allowed(name: str, prefixes: tuple[str, ...]) -> bool:
    return any(name == p or name.startswith(p + ".") for p in prefixes)


LIBRARY = ("advisor.whatif", "advisor.plugins", "advisor.engine", "advisor.model",
           "advisor.errors", "advisor.units", "advisor.metrics", "advisor.cleaning",
           "advisor.settings", "advisor.bounds", "advisor.interrupts")
#: a family folder's modules, by role (the name before any "_": kernel_gang is a kernel),
#: each role at a layer of the library (docs/plugins.md)
OWN_ENGINE = ("own.kernel", "own.mechanic")
ENGINE = ("advisor.engine", "advisor.model", "advisor.errors", *OWN_ENGINE)
OWN_PLUGIN = (*OWN_ENGINE, "own.inputs", "own.player", "own.plugin")
#: what the command line's modules stand on
UNDER_CLI = ("advisor.adapters", "advisor.views", "advisor.studies", "advisor.sources",
             "advisor.__version__", *LIBRARY)

RULES = [
    # (rooms, what their modules of ours may import; "own.x": the family's own x modules)
    (("advisor/engine",), ("advisor.engine", "advisor.model", "advisor.site", "advisor.errors")),
    (("advisor/model", "advisor/site", "advisor/releases", "advisor/joblog",
      "advisor/errors", "advisor/units", "advisor/bounds"),
     ("advisor.model", "advisor.site", "advisor.releases", "advisor.joblog",
      "advisor.errors")),
    (("advisor/plugins",), ("advisor.plugins", "advisor.engine", "advisor.model",
                            "advisor.errors", "advisor.units", "advisor.bounds")),
    (("advisor/settings",), ("advisor.errors", "advisor.bounds", "advisor.plugins")),
    (("advisor/whatif", "advisor/metrics", "advisor/cleaning"), LIBRARY),
    (("advisor/studies",), ("advisor.studies", *LIBRARY)),
    (("advisor/views",), ("advisor.views", "advisor.studies", *LIBRARY)),
    (("adapters",), ("advisor.adapters", "advisor.model", "advisor.errors", "advisor.cleaning",
                     "advisor.whatif.slurmconf", "advisor.interrupts")),
    (("advisor/interrupts",), ()),
    (("policies",), ("advisor.plugins",)),   # installed as advisor.policies
    (("policies/*/kernel*", "policies/*/mechanic", "policies/*/inputs", "policies/*/player"),
     ENGINE + ("own.inputs",)),
    (("policies/*/plugin",), ("advisor.plugins", "advisor.units", *OWN_PLUGIN)),
    (("policies/*/study*",), ("advisor.studies", *LIBRARY, *OWN_PLUGIN, "own.study")),
    (("policies/*/view",), ("advisor.views", "advisor.studies", *LIBRARY, *OWN_PLUGIN,
                            "own.study")),
    (("policies/*/command",), ("advisor.cli_plugins", "advisor.views", *LIBRARY,
                               *OWN_PLUGIN, "own.study", "own.view")),
    # the command line, over everything: each CLI module over the ones above it here
    (("advisor/sources",), ("advisor.adapters", *LIBRARY)),   # any source, by name
    (("advisor/cli_types",), ("advisor.units", "advisor.errors")),
    (("advisor/cli_common", "advisor/cli_args"), ("advisor.cli_types", *UNDER_CLI)),
    (("advisor/cli_plugins",), ("advisor.cli_args", "advisor.cli_common", "advisor.cli_types",
                                *UNDER_CLI)),
    (("advisor/cli", "advisor/cli_site"),
     ("advisor.cli_plugins", "advisor.cli_args", "advisor.cli_common", "advisor.cli_types",
      "advisor.bench", *UNDER_CLI)),
]


def own(path: Path, name: str) -> str:
    """What a family's module imports of its own family, as "own.<role>"."""
    if path.parent.parent == ROOT / "policies":
        prefix = f"advisor.policies.{path.parent.name}."
        if name.startswith(prefix):
            return "own." + name[len(prefix):].split("_")[0]
    return name


@pytest.mark.parametrize("rooms, may", RULES, ids=[", ".join(r[0]) for r in RULES])
def test_imports_point_down(rooms, may):
    wrong = [f"{path.relative_to(ROOT)} imports {name}"
             for path in modules(*rooms) for name in sorted(imports(path))
             if ours(name) and not allowed(own(path, name), may)]
    assert not wrong, "; ".join(wrong)


def test_every_module_is_in_a_room():
    """A module no rule sees is a module no rule checks: every module of the library and
    of the families is in a room (a family's bench is a script, and may import anything)."""
    seen = {p for rooms, _ in RULES for p in modules(*rooms)}
    top = {ROOT / "advisor" / f"{n}.py" for n in ("__init__", "bench", "plain_easy")}
    scripts = set(ROOT.glob("policies/*/bench.py")) | set(ROOT.glob("policies/*/__init__.py"))
    every = {*(ROOT / "advisor").rglob("*.py"), *(ROOT / "policies").rglob("*.py"),
             *(ROOT / "adapters").rglob("*.py")}
    unseen = sorted(str(p.relative_to(ROOT)) for p in every - seen - top - scripts
                    if "data" not in p.parts)
    assert not unseen, ", ".join(unseen)


def test_the_library_reaches_policies_only_through_the_registry():
    """No module of advisor/ names a built-in plugin module: a family is found, not named."""
    wrong = [str(p.relative_to(ROOT)) for p in (ROOT / "advisor").rglob("*.py")
             if any(allowed(n, ("advisor.policies",)) for n in imports(p))]
    assert not wrong


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[0] in ("adapters", "policies"):      # installed inside the advisor package
        parts.insert(0, "advisor")
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def runtime_imports(path: Path) -> set[str]:
    """``imports``, but not those made for type checkers alone (``if TYPE_CHECKING:``)."""
    tree = ast.parse(path.read_text())
    typing_only = {id(n) for top in ast.walk(tree) if isinstance(top, ast.If)
                   and "TYPE_CHECKING" in ast.unparse(top.test) for n in ast.walk(top)}
    out = set()
    for node in ast.walk(tree):
        if id(node) in typing_only:
            continue
        if isinstance(node, ast.Import):
            out |= {a.name for a in node.names}
        elif isinstance(node, ast.ImportFrom) and node.module and not node.level:
            out |= {node.module, *(f"{node.module}.{a.name}" for a in node.names)}
    return out


def test_no_module_imports_itself_back():
    """No import cycle among the repository's modules, counting imports made inside
    functions: a module that needs one that needs it again is one module split wrong."""
    paths = {module_name(p): p for room in ("advisor", "adapters", "policies")
             for p in (ROOT / room).rglob("*.py") if "data" not in p.parts}
    graph = {m: {n for n in runtime_imports(p) if n in paths and n != m}
             for m, p in paths.items()}
    done, cycles = set(), []

    def walk(m, path):
        if m in path:
            cycles.append(" -> ".join(path[path.index(m):] + [m]))
            return
        if m in done:
            return
        for n in sorted(graph[m]):
            walk(n, path + [m])
        done.add(m)

    for m in sorted(graph):
        walk(m, [])
    assert not cycles, "; ".join(cycles)
