"""Fixtures for the tests that run `agentls fix`: small buggy projects and a way to run it in-process.

Imported by the conftest.py of tests/pipeline, tests/workspace, tests/agents, tests/testing and tests/search.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from agent_core.cli import main
from engine_support import BUGGY_CALC, CliRun, make_project


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", BUGGY_CALC)


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user memory or configuration leaks into (or out of) a test run."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTLS_API_KEY", "sk-test-SECRET-0123456789")


@pytest.fixture
def run_fix():
    """Run `agentls fix` in-process and capture stdout/stderr."""

    def run(*args: str) -> CliRun:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(["fix", *args])
        return CliRun(code, out.getvalue(), err.getvalue())

    return run
