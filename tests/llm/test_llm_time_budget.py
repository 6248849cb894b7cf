"""The run's time budget in the LLM client: a call still waiting at the deadline ends there (TimeBudgetSpent, its
wait journalled as a cut call), and no call starts after it. The real openai client against the scripted server."""

from __future__ import annotations

import time

import pytest
from llm_support import API_KEY, GOOD, Recorder, Verdict
from pydantic import SecretStr

from agent_core.llm.base import BudgetSpent, TimeBudgetSpent
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.settings import Settings
from testkit.scripted_llm import Fault

ASK = [{"role": "user", "content": "Fix it."}]


def _client(base_url: str, recorder: Recorder, left_s: float) -> OpenAIChatClient:
    # The per-request timeout and the whole call's deadline are far longer than the time budget left.
    settings = Settings(base_url=base_url, retry_backoff_s=0.01, request_timeout_s=60, llm_deadline_s=120,
                        time_budget_s=300)
    settings.api_key = SecretStr(API_KEY)
    return OpenAIChatClient(settings, observer=recorder, deadline=time.monotonic() + left_s)


async def test_a_call_waiting_at_the_deadline_ends_there(scripted_llm, recorder: Recorder) -> None:
    scripted_llm.add("coder", GOOD)
    scripted_llm.add("coder", Fault.hang(60, then=GOOD))
    client = _client(scripted_llm.base_url, recorder, left_s=2.0)
    try:
        assert (await client.structured("coder", ASK, Verdict)).priority == 2, "a call within the budget is as ever"
        started = time.monotonic()
        with pytest.raises(TimeBudgetSpent) as caught:
            await client.structured("coder", ASK, Verdict)
        waited = time.monotonic() - started
    finally:
        await client.aclose()
    assert isinstance(caught.value, BudgetSpent) and str(caught.value) == (
        "the time budget is spent: 300 s (time_budget_s)")
    assert waited < 2.0 + 1.0, "ended at the deadline, not at the 60 s request timeout"
    assert len(scripted_llm.requests) == 2, "not retried past the deadline"
    assert [c.cut for c in recorder.calls] == [False, True]
    assert client.total_usage().llm_calls == 2


async def test_no_call_starts_after_the_deadline(scripted_llm, recorder: Recorder) -> None:
    scripted_llm.default("coder", GOOD)
    client = _client(scripted_llm.base_url, recorder, left_s=0.0)
    try:
        with pytest.raises(TimeBudgetSpent):
            await client.text("coder", ASK)
    finally:
        await client.aclose()
    assert scripted_llm.requests == [] and recorder.calls == [] and client.total_usage().llm_calls == 0
