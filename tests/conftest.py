"""Fixtures shared by every test area: the scripted OpenAI-compatible server."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from scripted_llm import ScriptedLLM


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A ScriptedLLM on 127.0.0.1 (free port), started for one test and stopped after it."""
    server = ScriptedLLM().start()
    try:
        yield server
    finally:
        server.stop()
