"""Layering rules from STYLE.md and docs/architecture.md, checked by walking every import statement.

- agent_core never imports pygls, lsprotocol or lsp_server (the engine knows no protocol).
- docker is imported only inside the package agent_core/sandbox/docker/.
- tree_sitter is imported only by agent_core/analysis/parser.py.
- agent_core's layers (LAYERS): a module imports only from its own layer or
  lower ones; within a layer packages may use each other, but
- no cycle exists between agent_core modules, and
- every module imports in one process, deepest first.

Every import counts, including those inside functions and under TYPE_CHECKING:
a lazy import hides a cycle from Python's import system, not from this test.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from collections.abc import Iterable, Mapping
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _imports(path: Path) -> set[str]:
    tree = ast.parse(path.read_text(encoding="utf-8"), filename=str(path))
    names: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            names.update(alias.name.split(".")[0] for alias in node.names)
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.add(node.module.split(".")[0])
    return names


def _python_files(package: str) -> list[Path]:
    return sorted((ROOT / package).rglob("*.py"))


def test_engine_knows_no_protocol():
    offenders = {
        str(p.relative_to(ROOT)): sorted(_imports(p) & {"pygls", "lsprotocol", "lsp_server", "mcp", "mcp_server"})
        for p in _python_files("agent_core")
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert offenders == {}, f"agent_core must not import the LSP layer: {offenders}"


@pytest.mark.parametrize(
    "module, allowed",
    [("docker", "agent_core/sandbox/docker/"), ("tree_sitter", "agent_core/analysis/parser.py")],
)
def test_heavy_imports_stay_in_one_place(module: str, allowed: str):
    """`allowed` is one module, or a package when it ends in a slash."""
    users = [
        str(p.relative_to(ROOT))
        for pkg in ("agent_core", "lsp_server")
        for p in _python_files(pkg)
        if module in _imports(p)
    ]
    outside = [user for user in users if not (user.startswith(allowed) if allowed.endswith("/") else user == allowed)]
    assert users and outside == [], f"only {allowed} may import {module}, found {outside}"


def test_checker_sees_a_violation(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("from pygls.server import LanguageServer\nimport docker.errors\n")
    assert {"pygls", "docker"} <= _imports(bad)


PACKAGE = ROOT / "agent_core"

# Bottom to top: each top-level module or package of agent_core, by layer.
LAYERS: list[set[str]] = [
    {"errors", "models", "events", "settings"},  # shared by every layer; import nothing above
    {"workspace", "sandbox", "llm", "local_model", "memory", "journal", "analysis"},  # seams and stores
    {"agents", "testing", "search", "report"},  # roles, test runs, localization, the run report
    {"pipeline", "gentests"},  # the workflows
    {"engine", "quickfix", "checks"},  # the front doors: a run, the background quick fix, one check at a time
    {"cli", "__main__"},  # the front end in this package (lsp_server is the other)
]


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def modules() -> dict[str, Path]:
    return {module_name(p): p for p in sorted(PACKAGE.rglob("*.py"))}


def _target(name: str, known: Mapping[str, Path]) -> str | None:
    """The agent_core module an import names (a package's __init__ for `from pkg import thing`)."""
    while name and name not in known:
        name = name.rpartition(".")[0]
    return name or None


def imports_of(source: str, known: Mapping[str, Path]) -> set[str]:
    """The agent_core modules `source` imports anywhere in its body."""
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(t for a in node.names if (t := _target(a.name, known)))
        elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            for alias in node.names:
                submodule = f"{node.module}.{alias.name}"
                target = submodule if submodule in known else _target(node.module, known)
                if target:
                    found.add(target)
    return found


def import_graph() -> dict[str, set[str]]:
    known = modules()
    return {name: imports_of(path.read_text(encoding="utf-8"), known) - {name} for name, path in known.items()}


def cycles(graph: Mapping[str, Iterable[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan's algorithm, iterative)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found: list[list[str]] = []
    for root in graph:
        if root in index:
            continue
        work = [(root, iter(graph.get(root, ())))]
        index[root] = low[root] = len(index)
        stack.append(root)
        on_stack.add(root)
        while work:
            node, edges = work[-1]
            nxt = next(edges, None)
            if nxt is not None:
                if nxt not in index:
                    index[nxt] = low[nxt] = len(index)
                    stack.append(nxt)
                    on_stack.add(nxt)
                    work.append((nxt, iter(graph.get(nxt, ()))))
                elif nxt in on_stack:
                    low[node] = min(low[node], index[nxt])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[node])
            if low[node] == index[node]:
                component = []
                while True:
                    member = stack.pop()
                    on_stack.discard(member)
                    component.append(member)
                    if member == node:
                        break
                if len(component) > 1:
                    found.append(sorted(component))
    return found


def layer_of(module: str) -> int:
    top = module.split(".")[1] if "." in module else ""
    for level, names in enumerate(LAYERS):
        if top in names:
            return level
    raise AssertionError(f"{module} is in no layer: add agent_core.{top} to LAYERS and docs/architecture.md")


def test_every_module_has_a_layer():
    for name in modules():
        if name != "agent_core":
            layer_of(name)


def test_lower_layers_never_import_higher_ones():
    upward = sorted(
        f"{module} (layer {layer_of(module)}) imports {target} (layer {layer_of(target)})"
        for module, targets in import_graph().items()
        if module != "agent_core"
        for target in targets
        if target != "agent_core" and layer_of(target) > layer_of(module)
    )
    assert upward == [], "imports point up the layers:\n" + "\n".join(upward)


def test_no_import_cycle_between_modules():
    found = cycles(import_graph())
    assert found == [], "import cycles (counting imports inside functions):\n" + "\n".join(map(str, found))


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


def test_checker_sees_an_import_inside_a_function():
    known = {"agent_core.engine": Path(), "agent_core.pipeline.run": Path(), "agent_core.pipeline": Path()}
    source = "def f():\n    from agent_core.pipeline.run import run_pipeline\n    from agent_core import engine\n"
    assert imports_of(source, known) == {"agent_core.pipeline.run", "agent_core.engine"}


def test_every_module_imports_deepest_first():
    """Every module imported in one process, deepest first (a lazy import's cycle breaks this order first)."""
    names = sorted((n for n in modules() if n != "agent_core.__main__"), key=lambda n: (-n.count("."), n))
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
