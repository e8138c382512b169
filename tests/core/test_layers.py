"""The packages are layers that import only downward, with no import cycle (docs/design.md):

    core (relayish.*) < typecheck < ad < runtime < {interp, jit} < frontend < facade

The facade is ``relayish/__init__.py`` (PEP 562 lazy exports), ``relayish.cli``,
``relayish.__main__``, ``relayish.testing.*`` and ``relayish.examples.*``; the core is the
rest of ``relayish``. interp and jit are siblings: neither imports the other.

Every ``.py`` file of the layers is parsed with ``ast`` (nothing is imported), and every import
counts, also those inside functions. The rules:

- layers: a module imports its own layer and those below it, nothing above or beside it;
- cycles: no import cycle among first-party modules, imports inside functions included, except
  imports inside ``__str__``/``__repr__`` (display hooks importing the printer) and under
  ``if TYPE_CHECKING:``, which never run at import;
- hidden imports: no first-party import inside a function outside the facade (an import hidden
  there to dodge a cycle hides the cycle), except in ``__str__``/``__repr__`` and the imports of
  the modules in ``LAZY``, which import a heavy third-party module when imported (each such
  import carries a comment saying why).
"""

from __future__ import annotations

import ast
from pathlib import Path
from typing import Iterable, NamedTuple

import pytest

from relayish.graphs import strongly_connected

ROOT = Path(__file__).resolve().parents[2]
PACKAGES = ("relayish", "typecheck", "ad", "runtime", "interp", "jit", "frontend")
FIRST_PARTY = (*PACKAGES, "bench", "tests")

FACADE = ("relayish", "relayish.cli", "relayish.__main__", "relayish.testing", "relayish.examples")
ORDER = ("core", "typecheck", "ad", "runtime", "interp", "jit", "frontend", "facade")
ALLOWED = {
    "core": {"core"},
    "typecheck": {"core", "typecheck"},
    "ad": {"core", "typecheck", "ad"},
    "runtime": {"core", "typecheck", "ad", "runtime"},
    "interp": {"core", "typecheck", "ad", "runtime", "interp"},  # never jit
    "jit": {"core", "typecheck", "ad", "runtime", "jit"},  # never interp
    "frontend": {"core", "typecheck", "ad", "runtime", "interp", "jit", "frontend"},
    "facade": {*ORDER, "outside"},
}
DISPLAY_HOOKS = ("__str__", "__repr__")

# Modules that import a heavy or optional third-party module when imported; importing them inside a
# function (with a comment saying so) keeps ``import jit`` from importing it.
LAZY = {"jit.cuda.runtime": "numba.cuda"}


class Import(NamedTuple):
    """One first-party import: ``source`` imports ``target`` at ``file:line``."""

    source: str
    target: str
    file: str
    line: int
    hidden: bool  # inside a function
    display: bool  # inside __str__ or __repr__
    type_only: bool  # under if TYPE_CHECKING:
    commented: bool  # the statement carries a comment

    def where(self) -> str:
        return f"{self.file}:{self.line}"


def layer(module: str) -> str:
    top = module.partition(".")[0]
    if top == "relayish":
        facade = any(module == f or module.startswith(f + ".") for f in FACADE[1:])
        return "facade" if module == "relayish" or facade else "core"
    return top if top in PACKAGES else "outside"


def module_name(path: Path, root: Path) -> str:
    parts = list(path.relative_to(root).with_suffix("").parts)
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def resolve(name: str, known: set[str]) -> str:
    """The module ``name`` names: itself, else its longest known prefix (a name defined in a module)."""
    while name not in known and "." in name:
        name = name.rpartition(".")[0]
    return name


def imports_of(module: str, source: str, file: str, known: set[str], is_package: bool = False) -> list[Import]:
    """The first-party imports of ``module`` (its text ``source``); relative imports count from its
    package (for a package's ``__init__``, the package itself)."""
    lines = source.splitlines()
    package = module if is_package else module.rpartition(".")[0]
    found: list[Import] = []

    def add(node: ast.stmt, targets: Iterable[str], function: str | None, type_only: bool) -> None:
        text = " ".join(lines[node.lineno - 1:node.end_lineno])
        for target in dict.fromkeys(targets):
            if target.partition(".")[0] in FIRST_PARTY and target != module:
                found.append(Import(module, target, file, node.lineno, function is not None,
                                    function in DISPLAY_HOOKS, type_only, "#" in text))

    def visit(node: ast.AST, function: str | None, type_only: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import):
                add(child, [resolve(a.name, known) for a in child.names], function, type_only)
            elif isinstance(child, ast.ImportFrom):
                if child.level:
                    base = package.split(".")[:len(package.split(".")) - (child.level - 1)]
                    stem = ".".join(base + ([child.module] if child.module else []))
                else:
                    stem = child.module or ""
                add(child, [f"{stem}.{a.name}" if f"{stem}.{a.name}" in known else resolve(stem, known)
                            for a in child.names], function, type_only)
            elif isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                # a function nested in __repr__ is still display code; any other def starts its own scope
                visit(child, child.name if function not in DISPLAY_HOOKS else function, type_only)
            elif isinstance(child, ast.If) and _is_type_checking(child.test):
                for stmt in child.body:
                    visit(ast.Module(body=[stmt], type_ignores=[]), function, True)
                for stmt in child.orelse:
                    visit(ast.Module(body=[stmt], type_ignores=[]), function, type_only)
            else:
                visit(child, function, type_only)

    visit(ast.parse(source, filename=file), None, False)
    return found


def _is_type_checking(test: ast.expr) -> bool:
    return isinstance(test, ast.Name) and test.id == "TYPE_CHECKING" or \
        isinstance(test, ast.Attribute) and test.attr == "TYPE_CHECKING"


def scan_sources(sources: dict[str, tuple[str, str, bool]]) -> list[Import]:
    """The imports of modules given as ``name -> (file, source, is_package)``."""
    known = set(sources)
    found: list[Import] = []
    for module, (file, source, is_package) in sorted(sources.items()):
        found += imports_of(module, source, file, known, is_package)
    return found


def scan(root: Path = ROOT) -> list[Import]:
    sources = {}
    for package in PACKAGES:
        for path in sorted((root / package).rglob("*.py")):
            sources[module_name(path, root)] = (str(path.relative_to(root)), path.read_text(), path.name == "__init__.py")
    return scan_sources(sources)


# the rules -----------------------------------------------------------------------------------------
def layer_violations(imports: list[Import]) -> list[str]:
    found = []
    for imp in imports:
        have, want = layer(imp.source), layer(imp.target)
        if want not in ALLOWED[have]:
            why = "a sibling" if {have, want} == {"interp", "jit"} else \
                "a layer above it" if want in ORDER and ORDER.index(want) > ORDER.index(have) else "outside the layers"
            found.append(f"{imp.where()}: {imp.source} ({have}) imports {imp.target} ({want}), {why}: "
                         f"the layer {have} may import only {', '.join(o for o in ORDER if o in ALLOWED[have])}")
    return found


def hidden_violations(imports: list[Import]) -> list[str]:
    found = []
    for imp in imports:
        if not imp.hidden or imp.display or imp.type_only or layer(imp.source) == "facade":
            continue
        if imp.target in LAZY and imp.commented:
            continue  # importing it imports a heavy third-party module: lazily on purpose, and said so
        why = " (a module in LAZY may be imported in a function with a comment saying why)" if imp.target in LAZY else ""
        found.append(f"{imp.where()}: {imp.source} imports {imp.target} inside a function: first-party imports "
                     f"belong at module level outside the facade (display hooks __str__/__repr__ excepted){why}")
    return found


class Cycle(NamedTuple):
    """A strongly connected set of modules (``members``) and one shortest cycle through it (its imports in order)."""

    members: frozenset[str]
    imports: list[Import]


def import_cycles(imports: list[Import]) -> list[Cycle]:
    """One cycle per strongly connected set of modules."""
    edges: dict[str, dict[str, Import]] = {}
    for imp in imports:
        if not (imp.display or imp.type_only):
            edges.setdefault(imp.source, {}).setdefault(imp.target, imp)
    cycles = [Cycle(frozenset(c), _shortest_cycle(min(c), edges, c)) for c in _components(edges)]
    return sorted(cycles, key=lambda c: min(c.members))


def _components(edges: dict[str, dict[str, Import]]) -> list[set[str]]:
    """Strongly connected components with more than one module."""
    successors = lambda module: sorted(edges.get(module, {}))  # noqa: E731
    return [set(c) for c in strongly_connected(sorted(edges), successors) if len(c) > 1]


def _shortest_cycle(start: str, edges: dict[str, dict[str, Import]], component: set[str]) -> list[Import]:
    previous: dict[str, Import] = {}
    frontier = [start]
    while frontier:
        following = []
        for node in frontier:
            for succ, imp in sorted(edges.get(node, {}).items()):
                if succ not in component or succ in previous:
                    continue
                previous[succ] = imp
                if succ == start:
                    path = [imp]
                    while path[0].source != start:
                        path.insert(0, previous[path[0].source])
                    return path
                following.append(succ)
        frontier = following
    raise AssertionError(f"no cycle through {start}")


def describe_cycle(cycle: Cycle) -> str:
    path = " -> ".join([cycle.imports[0].source] + [imp.target for imp in cycle.imports])
    among = f" (one of the cycles among {', '.join(sorted(cycle.members))})" if len(cycle.members) > len(cycle.imports) else ""
    return f"import cycle {path}{among}:\n" + \
        "\n".join(f"    {imp.where()}: {imp.source} imports {imp.target}" for imp in cycle.imports)


def _core(cycle: Cycle) -> bool:
    return all(layer(member) == "core" for member in cycle.members)


@pytest.fixture(scope="module")
def imports() -> list[Import]:
    return scan()


# the tree ------------------------------------------------------------------------------------------
def test_every_layer_imports_only_the_layers_below_it(imports):
    assert not layer_violations(imports), "\n".join(layer_violations(imports))


def test_no_import_cycle_outside_the_core(imports):
    cycles = [describe_cycle(c) for c in import_cycles(imports) if not _core(c)]
    assert not cycles, "\n".join(cycles)


def test_no_import_cycle_in_the_core(imports):
    cycles = [describe_cycle(c) for c in import_cycles(imports) if _core(c)]
    assert not cycles, "\n".join(cycles)


def test_no_first_party_import_hidden_in_a_function_outside_the_core(imports):
    found = hidden_violations([imp for imp in imports if layer(imp.source) != "core"])
    assert not found, "\n".join(found)


def test_no_first_party_import_hidden_in_a_function_in_the_core(imports):
    found = hidden_violations([imp for imp in imports if layer(imp.source) == "core"])
    assert not found, "\n".join(found)


def test_the_lazily_imported_modules_import_what_they_are_lazy_for():
    for module, heavy in LAZY.items():
        path = ROOT / (module.replace(".", "/") + ".py")
        tree = ast.parse(path.read_text())
        top = {a.name for node in tree.body if isinstance(node, ast.Import) for a in node.names}
        top |= {f"{node.module}.{a.name}" for node in tree.body if isinstance(node, ast.ImportFrom) for a in node.names}
        assert heavy in top, f"{path.relative_to(ROOT)} no longer imports {heavy} at module level: drop it from LAZY " \
                             "and import it at module level where it is used"


# the checker ---------------------------------------------------------------------------------------
def synthetic(**modules: str) -> list[Import]:
    """The imports of modules given as ``name=source`` (``__`` for dots; a name ending in
    ``__init`` is a package)."""
    sources = {}
    for key, source in modules.items():
        name = key.replace("__", ".")
        package = name.endswith(".init")
        name = name.removesuffix(".init")
        sources[name] = (name.replace(".", "/") + ("/__init__.py" if package else ".py"), source, package)
    return scan_sources(sources)


def test_the_checker_finds_an_upward_import_a_sibling_import_and_a_cycle():
    found = synthetic(
        relayish__a="from relayish import b\n",
        relayish__b="import relayish.a\nimport typecheck.x\n",  # the core importing typecheck: upward
        typecheck__x="X = 1\n",
        jit__lower="from interp.evaluator import step_limit\n",
        interp__evaluator="step_limit = 1\n",
    )
    violations = layer_violations(found)
    assert len(violations) == 2
    assert violations[0].startswith("jit/lower.py:1: jit.lower (jit) imports interp.evaluator (interp), a sibling")
    assert violations[1].startswith("relayish/b.py:2: relayish.b (core) imports typecheck.x (typecheck), a layer above")
    [cycle] = import_cycles(found)
    assert describe_cycle(cycle).startswith("import cycle relayish.a -> relayish.b -> relayish.a:\n"
                                            "    relayish/a.py:1: relayish.a imports relayish.b\n"
                                            "    relayish/b.py:1: relayish.b imports relayish.a")
    assert _core(cycle)


def test_the_checker_counts_hidden_imports_in_cycles_but_not_display_hooks_or_type_checking():
    found = synthetic(
        jit__cuda__launch="def f():\n    from ..kernels.registry import ArgType\n",
        jit__kernels__registry="from jit.cuda.launch import Launcher\n",
        jit__lower="class C:\n    def __repr__(self):\n        from .host import H\n        return ''\n",
        jit__host="from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .lower import C\nH = 1\n",
    )
    [cycle] = import_cycles(found)
    assert [imp.target for imp in cycle.imports] == ["jit.kernels.registry", "jit.cuda.launch"]
    [hidden] = hidden_violations(found)
    assert hidden.startswith("jit/cuda/launch.py:2: jit.cuda.launch imports jit.kernels.registry inside a function")


def test_the_checker_resolves_relative_imports_from_the_package():
    found = synthetic(
        jit__init="from .compile import compile\nfrom . import lower\n",
        jit__compile="from . import scalars\nfrom .kernels.registry import kernel\n",
        jit__scalars="",
        jit__lower="",
        jit__kernels__init="",
        jit__kernels__registry="from ..scalars import x\nfrom .. import lower\nfrom ...relayish import errors\n",
        relayish__errors="",
    )
    assert {(imp.source, imp.target) for imp in found} == {
        ("jit", "jit.compile"), ("jit", "jit.lower"), ("jit.compile", "jit.scalars"),
        ("jit.compile", "jit.kernels.registry"), ("jit.kernels.registry", "jit.scalars"),
        ("jit.kernels.registry", "jit.lower"), ("jit.kernels.registry", "relayish.errors")}


def test_the_checker_allows_the_facade_everything_and_lazy_modules_with_a_reason():
    found = synthetic(
        relayish__init="def __getattr__(name):\n    import jit\n",
        relayish__cli="def main():\n    from interp import evaluate\n    import frontend\n",
        jit__init="",
        interp__init="from .evaluator import evaluate\n",
        interp__evaluator="",
        frontend__init="",
        jit__cuda__runtime="",
        jit__compile="def a():\n    from .cuda import runtime  # lazy: numba.cuda\n\ndef b():\n    from .cuda import runtime\n",
    )
    assert not layer_violations(found)
    [hidden] = hidden_violations(found)
    assert hidden.startswith("jit/compile.py:5: jit.compile imports jit.cuda.runtime inside a function")
    assert "a module in LAZY" in hidden
