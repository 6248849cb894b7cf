"""A hung endpoint: the whole model call has a deadline across its retries, and reports it is waiting."""

from __future__ import annotations

import pytest
from llm_support import API_KEY, Verdict
from pydantic import SecretStr

from agent_core.llm import retrying
from agent_core.llm.base import LLMUnavailable
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.settings import Settings
from testkit.scripted_llm import Fault

ASK = [{"role": "user", "content": "Fix it."}]


def _client(base_url: str, waits: list[tuple[str, float]], **values) -> OpenAIChatClient:
    settings = Settings(base_url=base_url, retry_backoff_s=0.01, **values)
    settings.api_key = SecretStr(API_KEY)
    return OpenAIChatClient(settings, on_wait=lambda role, elapsed, tokens: waits.append((role, elapsed)))


async def test_a_hung_endpoint_is_given_up_at_the_deadline_not_after_every_retry(scripted_llm, monkeypatch):
    monkeypatch.setattr(retrying, "WAIT_REPORT_S", 0.5)
    scripted_llm.default("coder", Fault.hang(60))
    waits: list[tuple[str, float]] = []
    client = _client(scripted_llm.base_url, waits, request_timeout_s=1.0, max_retries=5, llm_deadline_s=2.5)
    try:
        with pytest.raises(LLMUnavailable) as caught:
            await client.structured("coder", ASK, Verdict)
    finally:
        await client.aclose()
    message = str(caught.value)
    assert "no answer within the 2.5 s deadline of one model call (llm_deadline_s)" in message
    assert f"endpoint {scripted_llm.base_url} timed out" in message
    assert len(scripted_llm.requests) in (2, 3), "retried while the deadline allowed, not all 1 + 5 times"
    assert [role for role, _ in waits][:2] == ["coder", "coder"], "waiting was reported while it lasted"
    assert waits == sorted(waits, key=lambda w: w[1])
