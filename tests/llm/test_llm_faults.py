"""Retries, timeouts, broken endpoints and cancellation, with the real openai client."""

from __future__ import annotations

import asyncio
import time

import pytest
from llm_support import GOOD, Verdict, closed_port

from agent_core.llm.base import LLMUnavailable
from agent_core.models import Usage
from testkit.scripted_llm import Fault

ASK = [{"role": "user", "content": "Plan the fix."}]


async def test_429_then_success_is_retried_and_counted(scripted_llm, make_client, recorder):
    scripted_llm.add("planner", Fault.status(429, times=2))
    scripted_llm.add("planner", GOOD)
    client = make_client()
    assert await client.structured("planner", ASK, Verdict) == Verdict(**GOOD)
    assert len(scripted_llm.requests) == 3
    (call,) = recorder.calls
    assert call.attempts == 3
    assert client.usage_by_role()["planner"].llm_calls == 1


async def test_repeated_500_gives_unavailable_after_max_retries(scripted_llm, make_client):
    scripted_llm.default("coder", Fault.status(500))
    with pytest.raises(LLMUnavailable) as caught:
        await make_client(max_retries=2).structured("coder", ASK, Verdict)
    assert len(scripted_llm.requests) == 3  # one try + two retries
    message = str(caught.value)
    assert message == f"endpoint {scripted_llm.base_url} failed: HTTP 500 scripted HTTP 500 (3 attempts)"


async def test_hang_past_the_timeout_fails_within_about_the_timeout(scripted_llm, make_client):
    scripted_llm.add("coder", Fault.hang(10))
    client = make_client(request_timeout_s=0.4, max_retries=0)
    start = time.monotonic()
    with pytest.raises(LLMUnavailable, match=r"timed out after 0\.4 s"):
        await client.structured("coder", ASK, Verdict)
    assert time.monotonic() - start < 1.5


async def test_hang_then_retry_succeeds(scripted_llm, make_client, recorder):
    scripted_llm.add("coder", Fault.hang(10))
    scripted_llm.add("coder", GOOD)
    client = make_client(request_timeout_s=0.3, max_retries=1)
    assert await client.structured("coder", ASK, Verdict) == Verdict(**GOOD)
    assert recorder.calls[0].attempts == 2


async def test_malformed_body_is_retried(scripted_llm, make_client, recorder):
    scripted_llm.add("tester", Fault.malformed())
    scripted_llm.add("tester", GOOD)
    assert await make_client().structured("tester", ASK, Verdict) == Verdict(**GOOD)
    assert recorder.calls[0].attempts == 2


async def test_always_malformed_body_gives_unavailable(scripted_llm, make_client):
    scripted_llm.default("tester", Fault.malformed())
    with pytest.raises(LLMUnavailable, match="malformed response body"):
        await make_client(max_retries=1).structured("tester", ASK, Verdict)


async def test_endpoint_down_is_unavailable_quickly_with_one_line(make_client):
    url = f"http://127.0.0.1:{closed_port()}/v1"
    client = make_client(base_url=url, max_retries=3, request_timeout_s=5)
    start = time.monotonic()
    with pytest.raises(LLMUnavailable) as caught:
        await client.structured("planner", ASK, Verdict)
    assert time.monotonic() - start < 1.0
    assert str(caught.value) == f"endpoint {url} unreachable: connection refused (2 attempts)"


async def test_auth_failure_is_not_retried(scripted_llm, make_client):
    scripted_llm.add("planner", Fault.status(401))
    scripted_llm.add("planner", GOOD)
    with pytest.raises(LLMUnavailable, match="rejected the API key: HTTP 401"):
        await make_client().structured("planner", ASK, Verdict)
    assert len(scripted_llm.requests) == 1


async def test_cancelling_aborts_the_request_promptly(scripted_llm, make_client):
    scripted_llm.add("coder", Fault.hang(10))
    client = make_client(request_timeout_s=30)
    task = asyncio.create_task(client.structured("coder", ASK, Verdict))
    while not scripted_llm.requests:
        await asyncio.sleep(0.02)
    start = time.monotonic()
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert time.monotonic() - start < 0.5
    assert client.usage_by_role() == {"coder": Usage(llm_calls=1)}, "sent, never answered: a call without tokens"
