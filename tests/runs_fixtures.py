"""Fixtures for the tests of what runs leave behind: an isolated environment, a buggy project, the real CLI.

Imported by the conftest.py of tests/runs and tests/memory.
"""

from __future__ import annotations

import contextlib
import io
from pathlib import Path

import pytest

from agent_core.cli import main
from testkit.runs_support import BUGGY_CALC, SECRET, CliRun, make_project


@pytest.fixture(autouse=True)
def _isolated_env(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """No user memory, endpoint or key leaks into (or out of) a test run; a fake key is set."""
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)
    monkeypatch.setenv("AGENTLS_API_KEY", SECRET)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    return make_project(tmp_path / "proj", BUGGY_CALC)


@pytest.fixture
def cli():
    """Run `agentls ARGS...` in-process and capture stdout/stderr."""

    def run(*args: str) -> CliRun:
        out, err = io.StringIO(), io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(list(args))
        return CliRun(code, out.getvalue(), err.getvalue())

    return run
