"""Layering rules from STYLE.md, checked by walking every import statement.

- agent_core never imports pygls, lsprotocol or lsp_server (the engine knows no protocol).
- docker is imported only by agent_core/sandbox/docker_backend.py.
- tree_sitter is imported only by agent_core/analysis/parser.py.
"""

from __future__ import annotations

import ast
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
        str(p.relative_to(ROOT)): sorted(_imports(p) & {"pygls", "lsprotocol", "lsp_server"})
        for p in _python_files("agent_core")
    }
    offenders = {k: v for k, v in offenders.items() if v}
    assert offenders == {}, f"agent_core must not import the LSP layer: {offenders}"


@pytest.mark.parametrize(
    "module, allowed",
    [("docker", "agent_core/sandbox/docker_backend.py"), ("tree_sitter", "agent_core/analysis/parser.py")],
)
def test_heavy_imports_stay_in_one_place(module: str, allowed: str):
    users = [
        str(p.relative_to(ROOT))
        for pkg in ("agent_core", "lsp_server")
        for p in _python_files(pkg)
        if module in _imports(p)
    ]
    assert set(users) <= {allowed}, f"only {allowed} may import {module}, found {users}"


def test_checker_sees_a_violation(tmp_path: Path):
    bad = tmp_path / "bad.py"
    bad.write_text("from pygls.server import LanguageServer\nimport docker.errors\n")
    assert {"pygls", "docker"} <= _imports(bad)
