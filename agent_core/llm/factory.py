"""Builds the LLM client a run uses, from settings."""

from __future__ import annotations

from collections.abc import Callable

from agent_core.llm.base import LLMClient, LLMObserver
from agent_core.settings import Settings


def make_llm_client(
    settings: Settings, observer: LLMObserver | None = None, on_wait: Callable[[str, float, int], None] | None = None,
    deadline: float | None = None,
) -> LLMClient:
    """The OpenAI-compatible client for `settings`; `observer` sees every completed call.

    `on_wait(role, elapsed_s, tokens)` is called every few seconds while a call waits for its answer
    (`tokens`: how many its answer has streamed so far). `deadline` (time.monotonic()): the end of the run's
    time_budget_s, after which no call starts and at which a call still waiting ends (TimeBudgetSpent).
    """
    from agent_core.llm.openai_client import OpenAIChatClient  # the openai import is heavy: load on demand

    return OpenAIChatClient(settings, observer=observer, on_wait=on_wait, deadline=deadline)
