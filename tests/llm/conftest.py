"""Fixtures of the LLM layer tests: settings aimed at the scripted server, a recording observer."""

from __future__ import annotations

from collections.abc import AsyncIterator, Callable, Iterator
from typing import Any

import pytest
from llm_support import API_KEY, Recorder
from pydantic import SecretStr

from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.llm.retrying import RetryPolicy
from agent_core.settings import Settings


@pytest.fixture(autouse=True)
def _fresh_mode_cache() -> Iterator[None]:
    OpenAIChatClient.modes.clear()
    yield
    OpenAIChatClient.modes.clear()


@pytest.fixture
def recorder() -> Recorder:
    return Recorder()


@pytest.fixture
async def make_client(scripted_llm, recorder) -> AsyncIterator[Callable[..., OpenAIChatClient]]:
    """Build clients aimed at the scripted server; tiny timeouts and backoff; closed after the test."""
    made: list[OpenAIChatClient] = []

    def build(**overrides: Any) -> OpenAIChatClient:
        values: dict[str, Any] = {
            "base_url": scripted_llm.base_url,
            "request_timeout_s": 2.0,
            "max_retries": 2,
            "retry_backoff_s": 0.01,
        }
        values.update(overrides)
        settings = Settings(**values)
        settings.api_key = SecretStr(API_KEY)
        policy = RetryPolicy(max_retries=settings.max_retries, base_s=0.01, max_s=0.05)
        client = OpenAIChatClient(settings, observer=recorder, retry_policy=policy)
        made.append(client)
        return client

    yield build
    for client in made:
        await client.aclose()
