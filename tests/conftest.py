"""Fixtures shared by every test area: the scripted OpenAI-compatible server."""

from __future__ import annotations

import os
from collections.abc import Iterator

import pytest

from scripted_llm import ScriptedLLM

# The mutant search fixes most of the tests' one-token bugs before any model call; the tests of the model
# path run with it off (inherited by every server and CLI they start). The tests in tests/search/
# turn it on again.
os.environ.setdefault("AGENTLS_SEARCH", "0")
# Looking for a second green edit after a search's fix costs one more driver run (and a suite run when one
# passes): seconds on each of the many tests the search fixes. tests/search/test_search_rival_fix.py turns it on.
os.environ.setdefault("AGENTLS_SEARCH__RIVALS", "0")
# The model's fills of the search's holes are calls to the scripted endpoint that the model-path tests do not
# queue: off unless a test turns them on (tests/search/infill/).
os.environ.setdefault("AGENTLS_SEARCH__INFILL", "0")


@pytest.fixture
def scripted_llm() -> Iterator[ScriptedLLM]:
    """A ScriptedLLM on 127.0.0.1 (free port), started for one test and stopped after it."""
    server = ScriptedLLM().start()
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(autouse=True)
def _docker_only_where_asked(request: pytest.FixtureRequest, monkeypatch: pytest.MonkeyPatch) -> None:
    """Only tests marked `docker` see the Docker engine CI starts.

    With DOCKER_HOST set, the `auto` sandbox backend picks Docker; every other
    test is about something else and runs on bubblewrap, the default where no
    engine answers. The Docker backend is proven by the `docker` tests and the
    containment suite.
    """
    if request.node.get_closest_marker("docker") is None:
        monkeypatch.delenv("DOCKER_HOST", raising=False)
