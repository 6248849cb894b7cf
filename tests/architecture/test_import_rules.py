"""Layering rules from STYLE.md and docs/architecture.md, checked by walking every import statement.

- agent_core never imports pygls, lsprotocol, mcp or a front end (the engine knows no protocol);
  the two front ends (lsp_server, mcp_server) never import each other.
- docker is imported only inside the package agent_core/sandbox/docker/.
- tree_sitter is imported only by agent_core/analysis/parser.py.
- In each of agent_core, lsp_server and mcp_server (their layers below), a module
  imports only from its own layer or lower ones; within a layer modules may use
  each other, but
- no cycle exists between a package's modules, and
- every module imports in one process, deepest first.

Every import counts, including those inside functions and under TYPE_CHECKING:
a lazy import hides a cycle from Python's import system, not from this test.
The checker is import_checker.py; test_import_checker.py shows it catching an
added cycle and an added upward import in copies of these packages.
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest
from import_checker import INIT, Package, cycles, import_graph, modules, unlayered, upward_imports

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
        for pkg in ("agent_core", "lsp_server", "mcp_server")
        for p in _python_files(pkg)
        if module in _imports(p)
    ]
    outside = [user for user in users if not (user.startswith(allowed) if allowed.endswith("/") else user == allowed)]
    assert users and outside == [], f"only {allowed} may import {module}, found {outside}"


def test_checker_sees_a_violation(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("from pygls.server import LanguageServer\nimport docker.errors\n")
    assert {"pygls", "docker"} <= _imports(bad)


# Bottom to top: each top-level module or sub-package of a package, by layer.
AGENT_CORE = Package("agent_core", ROOT, (
    frozenset({INIT, "errors", "models", "events", "settings"}),  # shared by every layer; import nothing above
    frozenset({"workspace", "sandbox", "llm", "local_model", "memory", "journal", "analysis"}),  # seams and stores
    frozenset({"agents", "testing", "search", "report"}),  # roles, test runs, localization, the run report
    frozenset({"pipeline", "gentests"}),  # the workflows
    frozenset({"engine", "quickfix", "checks"}),  # the front doors: a run, the background quick fix, one check
    frozenset({"cli", "__main__"}),  # the front end in this package (lsp_server and mcp_server are the others)
))
LSP_SERVER = Package("lsp_server", ROOT, (
    frozenset({INIT, "convert", "protocol", "engine_thread"}),  # conversions and plumbing
    frozenset({"documents", "settings", "edits", "preview", "diagnostics", "safety", "failed_runs"}),  # services
    frozenset({"runs"}),  # the run manager, built on the services
    frozenset({"quickfixes", "code_actions", "commands"}),  # features that start or follow runs
    frozenset({"framing", "server", "__main__"}),  # the transport and the composition root
))
MCP_SERVER = Package("mcp_server", ROOT, (
    frozenset({INIT, "models", "roots", "deps", "worker", "http_auth"}),  # schemas, roots, the engine bridge, the token
    frozenset({"convert", "resources"}),  # engine results -> MCP results; the resources
    frozenset({"tools"}),  # the tool handlers
    frozenset({"server", "__main__"}),  # the composition root
))
PACKAGES = [AGENT_CORE, LSP_SERVER, MCP_SERVER]
by_name = pytest.mark.parametrize("package", PACKAGES, ids=[p.name for p in PACKAGES])


@by_name
def test_every_module_has_a_layer(package: Package):
    assert unlayered(package) == [], f"in no layer: add them to {package.name}'s layers and docs/architecture.md"


@by_name
def test_lower_layers_never_import_higher_ones(package: Package):
    upward = upward_imports(package)
    assert upward == [], "imports point up the layers:\n" + "\n".join(upward)


@by_name
def test_no_import_cycle_between_modules(package: Package):
    found = cycles(import_graph(package))
    assert found == [], "import cycles (counting imports inside functions):\n" + "\n".join(map(str, found))


def test_front_ends_never_import_each_other():
    pairs = [("lsp_server", "mcp_server"), ("mcp_server", "lsp_server")]
    offenders = [f"{p.relative_to(ROOT)} imports {other}" for pkg, other in pairs
                 for p in _python_files(pkg) if other in _imports(p)]
    assert offenders == []


@by_name
def test_every_module_imports_deepest_first(package: Package):
    """Every module imported in one process, deepest first (a lazy import's cycle breaks this order first)."""
    names = sorted((n for n in modules(package) if not n.endswith(".__main__")), key=lambda n: (-n.count("."), n))
    script = "import importlib, sys\nfor name in sys.argv[1:]:\n    importlib.import_module(name)\n"
    done = subprocess.run([sys.executable, "-c", script, *names], capture_output=True, text=True, cwd=ROOT)
    assert done.returncode == 0, done.stderr[-3000:]
