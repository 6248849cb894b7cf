"""The search's inner walls (docs/architecture.md, agent_core/search/__init__.py), checked on every import.

- inside/ (the scripts copied into the sandbox) imports nothing of agent_core but its own siblings;
- the rest of the search is layered: candidate.py and linetext.py, then evidence/, then catalogue/ and
  templates/ (which never import each other), then driver/, then the front door (front.py, __init__.py);
- nothing outside agent_core/search imports its inner modules: only `agent_core.search` itself.

Every import counts, including those inside functions (import_checker.py).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest
from import_checker import INIT, Package, import_graph, imports_of, layer_of, modules, upward_imports
from test_import_rules import AGENT_CORE, LSP_SERVER, MCP_SERVER, ROOT

SEARCH = "agent_core.search"
LAYERS = (  # bottom to top, by the name of each top-level module or sub-package of the search
    frozenset({"candidate", "linetext", "twins"}),  # the candidate shape; where a node sits in a line; copied lines
    frozenset({"evidence"}),  # what a failing run says
    frozenset({"catalogue", "templates", "infill"}),  # the candidates (infill: the model's)
    frozenset({"driver"}),  # trying them
    frozenset({"front", INIT}),  # the front door
)
INSIDE = f"{SEARCH}.inside"


def _search_graph() -> dict[str, set[str]]:
    """The search's modules (as if `agent_core.search` were the package) -> the search modules they import."""
    graph = import_graph(AGENT_CORE)
    return {name.removeprefix("agent_core."): {t.removeprefix("agent_core.") for t in targets if t.startswith(SEARCH)}
            for name, targets in graph.items() if name.startswith(SEARCH) and not name.startswith(INSIDE)}


def test_the_inside_scripts_import_nothing_of_agent_core():
    offenders = []
    for path in sorted((ROOT / "agent_core/search/inside").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else \
                [node.module or ""] if isinstance(node, ast.ImportFrom) and node.level == 0 else []
            offenders += [f"{path.name} imports {n}" for n in names if n.split(".")[0] == "agent_core"]
            if isinstance(node, ast.ImportFrom) and node.level > 1:
                offenders.append(f"{path.name} imports from outside inside/ (level {node.level})")
    assert offenders == []


def test_every_search_module_has_a_layer():
    package = Package("search", ROOT / "agent_core", LAYERS)
    names = [n for n in modules(package) if not n.startswith("search.inside")]
    assert [n for n in names if layer_of(package, n) is None] == []


def test_the_search_layers_import_downwards_only():
    package = Package("search", ROOT / "agent_core", LAYERS)
    upward = upward_imports(package, _search_graph())
    assert upward == [], "the search's imports point up its layers:\n" + "\n".join(upward)


def test_the_catalogue_and_the_templates_never_import_each_other():
    crossing = [f"{m} imports {t}" for m, targets in _search_graph().items() for t in targets
                for a, b in (("catalogue", "templates"), ("templates", "catalogue"))
                if m.startswith(f"search.{a}") and t.startswith(f"search.{b}")]
    assert crossing == []


@pytest.mark.parametrize("package", [AGENT_CORE, LSP_SERVER, MCP_SERVER], ids=lambda p: p.name)
def test_only_the_front_door_is_imported_from_outside_the_search(package: Package):
    known = {**modules(AGENT_CORE), **modules(package)}
    offenders = []
    for name, path in modules(package).items():
        if name.startswith(SEARCH):
            continue
        for target in imports_of(path.read_text(encoding="utf-8"), known, name, path.stem == INIT):
            if target.startswith(f"{SEARCH}."):
                offenders.append(f"{name} imports {target}")
    assert offenders == [], "import the search through `agent_core.search` only:\n" + "\n".join(offenders)


def test_bench_imports_only_the_front_door():
    known = modules(AGENT_CORE)
    offenders = [f"{path.relative_to(ROOT)} imports {target}" for path in sorted((ROOT / "bench").glob("*.py"))
                 for target in imports_of(path.read_text(encoding="utf-8"), known)
                 if target.startswith(f"{SEARCH}.")]
    assert offenders == []


def test_the_checks_see_a_violation(tmp_path: Path):
    """An inner module imported from outside, and an upward import inside, are both caught."""
    known = modules(AGENT_CORE)
    assert imports_of("from agent_core.search.driver.ranking import arrange\n", known) == {
        "agent_core.search.driver.ranking"}
    package = Package("search", ROOT / "agent_core", LAYERS)
    graph = {**_search_graph(), "search.evidence.spectrum": {"search.driver.ranking"}}
    assert upward_imports(package, graph) == [
        "search.evidence.spectrum (layer 1) imports search.driver.ranking (layer 3)"]
