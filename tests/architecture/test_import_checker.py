"""The import checker catches what it is for: a cycle or an upward import added to a package.

Each case copies a real package (agent_core, lsp_server, mcp_server) into a
temporary folder, adds one import line to the copy, and runs the same checker
and layer map that test_import_rules.py runs on the real tree.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
from import_checker import Package, cycles, import_graph, imports_of, upward_imports
from test_import_rules import AGENT_CORE, LSP_SERVER, MCP_SERVER

LAZY = "\n\ndef _later() -> None:\n    {line}\n"  # an import inside a function: Python's import system never sees it
HIDDEN = "\nfrom typing import TYPE_CHECKING\n\nif TYPE_CHECKING:\n    {line}\n"  # a type-only import


def _copy(package: Package, tmp_path: Path) -> Package:
    shutil.copytree(package.folder, tmp_path / package.name, ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
    return Package(package.name, tmp_path, package.layers)


def _add(package: Package, module: str, line: str, wrapper: str) -> None:
    path = package.root / (module.replace(".", "/") + ".py")
    path.write_text(path.read_text(encoding="utf-8") + wrapper.format(line=line), encoding="utf-8")


# (package, a bottom-layer module, a module above it that already imports it, how the upward import is written)
CASES = [
    (AGENT_CORE, "agent_core.models", "agent_core.engine", "from agent_core.engine import Engine", LAZY),
    (LSP_SERVER, "lsp_server.convert", "lsp_server.runs", "from lsp_server.runs import RunManager", HIDDEN),
    (LSP_SERVER, "lsp_server.engine_thread", "lsp_server.runs", "from . import runs", LAZY),
    (MCP_SERVER, "mcp_server.models", "mcp_server.convert", "from mcp_server import convert", HIDDEN),
]


@pytest.mark.parametrize("package, low, high, line, wrapper", CASES, ids=[c[1] for c in CASES])
def test_an_added_upward_import_is_reported_with_its_cycle(tmp_path: Path, package: Package, low: str, high: str,
                                                          line: str, wrapper: str):
    copy = _copy(package, tmp_path)
    assert upward_imports(copy) == [] and cycles(import_graph(copy)) == []  # the copy is as clean as the tree
    assert low in import_graph(copy)[high]
    _add(copy, low, line, wrapper)
    graph = import_graph(copy)
    level = next(i for i, names in enumerate(package.layers) if high.split(".")[1] in names)
    assert [u for u in upward_imports(copy, graph) if u.startswith(f"{low} ")] == [
        f"{low} (layer 0) imports {high} (layer {level})"
    ]
    assert any({low, high} <= set(component) for component in cycles(graph))


def test_a_cycle_within_one_layer_is_reported(tmp_path: Path):
    """Modules of one layer may import each other, but never both ways round."""
    copy = _copy(LSP_SERVER, tmp_path)
    assert "lsp_server.documents" in import_graph(copy)["lsp_server.edits"]
    _add(copy, "lsp_server.documents", "from lsp_server.edits import EditApplier", HIDDEN)
    assert upward_imports(copy) == []
    assert cycles(import_graph(copy)) == [["lsp_server.documents", "lsp_server.edits"]]


@pytest.mark.parametrize(
    "graph, expected",
    [
        ({"a": {"b"}, "b": {"c"}, "c": set()}, []),
        ({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}, [["a", "b", "c"]]),
        ({"a": {"b"}, "b": {"a"}, "c": {"d"}, "d": {"c"}}, [["a", "b"], ["c", "d"]]),
    ],
)
def test_cycle_finder(graph: dict[str, set[str]], expected: list[list[str]]):
    assert sorted(cycles(graph)) == expected


@pytest.mark.parametrize(
    "importer, is_package, source, expected",
    [
        ("p.engine", False, "def f():\n    from p.pipeline.run import go\n    from p import engine\n",
         {"p.pipeline.run", "p.engine"}),
        ("p.pipeline.run", False, "from . import graph\nfrom ..models import X\nfrom .graph import g\n",
         {"p.pipeline.graph", "p.models"}),
        ("p.pipeline", True, "from .run import go\nfrom . import graph\n", {"p.pipeline.run", "p.pipeline.graph"}),
        ("p.models", False, "import p.pipeline.run as r\nimport os\nfrom ...elsewhere import x\n", {"p.pipeline.run"}),
    ],
)
def test_checker_reads_every_kind_of_import(importer: str, is_package: bool, source: str, expected: set[str]):
    known = {name: Path() for name in ("p", "p.engine", "p.models", "p.pipeline", "p.pipeline.run",
                                       "p.pipeline.graph")}
    assert imports_of(source, known, importer, is_package) == expected
