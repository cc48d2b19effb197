"""The package's layers, read from its source: no import cycle, and each layer imports only
the layers below it (a family never the pipeline that wires it, a verifier never the
anonymizer it checks, the registry nothing but declarations)."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

import pytest

PACKAGE = Path(__file__).resolve().parents[1] / "anonymizers"


def _module_name(path: Path) -> str:
    return ".".join(path.relative_to(PACKAGE.parent).with_suffix("").parts).removesuffix(
        ".__init__")


MODULES = {_module_name(path): path for path in PACKAGE.rglob("*.py")}


def _runtime_imports(tree: ast.AST) -> Iterator[ast.Import | ast.ImportFrom]:
    """Every import statement, at module level or in a function, but not under
    ``if TYPE_CHECKING:`` (annotations only: no import happens at run time)."""
    for node in ast.iter_child_nodes(tree):
        if isinstance(node, ast.If) and "TYPE_CHECKING" in ast.unparse(node.test):
            continue
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            yield node
        yield from _runtime_imports(node)


def _resolve(name: str) -> str | None:
    while name and name not in MODULES:
        name = name.rpartition(".")[0]
    return name or None


def _imports(module: str) -> set[str]:
    """The package's modules that ``module`` imports (a name imported from a package is
    the submodule of that name when there is one)."""
    found: set[str | None] = set()
    for node in _runtime_imports(ast.parse(MODULES[module].read_text())):
        if isinstance(node, ast.Import):
            found |= {_resolve(alias.name) for alias in node.names
                      if alias.name.startswith("anonymizers")}
        elif node.module and node.module.startswith("anonymizers"):
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                found.add(full if full in MODULES else _resolve(node.module))
    found.discard(None)
    found.discard(module)
    return {name for name in found if name is not None}


GRAPH = {module: _imports(module) for module in MODULES}


def _cycles() -> list[list[str]]:
    """Strongly connected components of more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    components: list[list[str]] = []

    def visit(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in GRAPH[v]:
            if w not in index:
                visit(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            component = []
            while (w := stack.pop()) != v:
                component.append(w)
            components.append(sorted([v, *component]))

    for module in GRAPH:
        if module not in index:
            visit(module)
    return [component for component in components if len(component) > 1]


def _importers(target: str) -> set[str]:
    return {module for module, deps in GRAPH.items()
            if any(dep == target or dep.startswith(target + ".") for dep in deps)}


def test_no_import_cycle():
    assert _cycles() == []


def test_the_cycle_finder_finds_a_planted_cycle(monkeypatch):
    monkeypatch.setitem(GRAPH, "anonymizers.errors", GRAPH["anonymizers.errors"] | {
        "anonymizers.cli"})
    assert any("anonymizers.errors" in component for component in _cycles())


def test_only_the_entry_points_import_the_cli():
    assert _importers("anonymizers.cli") <= {"anonymizers.__main__"}


@pytest.mark.parametrize("lower", ["anonymizers.families", "anonymizers.release",
                                   "anonymizers.verifiers", "anonymizers.loading",
                                   "anonymizers.db"])
def test_no_lower_layer_imports_the_pipeline(lower):
    assert {m for m in _importers("anonymizers.pipeline") if m.startswith(lower)} == set()


def test_the_registry_reads_declarations_only():
    allowed = {"anonymizers.errors", "anonymizers.parameters", "anonymizers.risks",
               "anonymizers.families.declaration"}
    for module in ("anonymizers.families.registry", "anonymizers.families.declaration",
                   "anonymizers.parameters", "anonymizers.risks"):
        assert GRAPH[module] <= allowed, module
    for module in (m for m in MODULES if m.endswith(".declaration")):
        assert GRAPH[module] <= allowed, module


@pytest.mark.parametrize("family", sorted(
    path.name for path in (PACKAGE / "families").iterdir() if (path / "declaration.py").exists()))
def test_a_verifier_never_imports_the_anonymizer_it_checks(family):
    """The family's verifier side (verifier*.py) reads its declaration, never its steps or
    algorithms: an anonymizer bug must not become the verifier's."""
    package = f"anonymizers.families.{family}"
    verifier_side = {m for m in MODULES if m.startswith(f"{package}.verifier")}
    assert verifier_side, f"{family} has no verifier module"
    for module in verifier_side:
        own = {dep for dep in GRAPH[module] if dep.startswith(package + ".")}
        assert own <= verifier_side | {f"{package}.declaration"}, (module, own)
