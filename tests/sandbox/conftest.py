"""Fixtures of the sandbox tests: real backends on private temp workspaces."""

from __future__ import annotations

import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir


@pytest.fixture
def workspace() -> Iterator[Path]:
    """An empty private workspace under an agentls-* temp dir, removed afterwards."""
    base = make_temp_dir("sbtest")
    ws = base / "ws"
    ws.mkdir()
    try:
        yield ws
    finally:
        remove_temp_dir(base)


@pytest.fixture
def token() -> str:
    """A unique word to put in a payload's argv, to find its processes in /proc."""
    return f"agentls-probe-{uuid.uuid4().hex}"
