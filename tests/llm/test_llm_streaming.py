"""Streamed answers: assembled from SSE chunks, usage from the stream or counted, refusals
remembered, and the time limits: a stall fails an attempt in about llm_stall_s, a slow but
steady stream outlives llm_deadline_s, a hang before the headers ends at the deadline, the cap
cuts any answer (keeping what arrived). The real openai client against the scripted server's real SSE."""

from __future__ import annotations

import json
import time

import pytest
from llm_support import API_KEY, GOOD, Recorder, Verdict
from pydantic import SecretStr

from agent_core.llm import retrying
from agent_core.llm.base import LLMUnavailable
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.llm.streaming import estimate_prompt_tokens
from agent_core.settings import Settings
from testkit.scripted_llm import Fault, Samples, estimate_tokens
from testkit.scripted_stream import pieces

ASK = [{"role": "user", "content": "Fix the off-by-one in range()."}]
LONG = "def total(xs):\n    return sum(xs)\n" * 3  # 102 characters: 26 streamed pieces


def _client(base_url: str, recorder: Recorder | None = None, waits: list | None = None, **values) -> OpenAIChatClient:
    values = {"retry_backoff_s": 0.01, **values}
    settings = Settings(base_url=base_url, **values)
    settings.api_key = SecretStr(API_KEY)
    on_wait = (lambda role, elapsed, tokens: waits.append((role, elapsed, tokens))) if waits is not None else None
    return OpenAIChatClient(settings, observer=recorder, on_wait=on_wait)


async def test_a_streamed_answer_is_assembled_with_the_streams_usage(scripted_llm):
    scripted_llm.add("planner", GOOD)
    recorder = Recorder()
    client = _client(scripted_llm.base_url, recorder)
    try:
        verdict = await client.structured("planner", ASK, Verdict)
    finally:
        await client.aclose()
    assert verdict == Verdict(**GOOD)
    (request,) = scripted_llm.requests
    assert request["stream"] is True and request["stream_options"] == {"include_usage": True}
    (call,) = recorder.calls
    answer = json.dumps(GOOD)
    assert call.answer == answer
    assert call.usage.completion_tokens == len(pieces(answer)) and call.usage.llm_calls == 1
    assert call.usage.prompt_tokens > 0 and not call.prompt_tokens_estimated


async def test_without_usage_in_the_stream_tokens_are_counted_and_the_prompt_estimated(scripted_llm):
    scripted_llm.stream_usage = False  # llama-cpp-python's server sends no usage in a stream
    scripted_llm.add("coder", LONG)
    recorder = Recorder()
    client = _client(scripted_llm.base_url, recorder)
    try:
        text = await client.text("coder", ASK)
    finally:
        await client.aclose()
    assert text == LONG
    (call,) = recorder.calls
    assert call.prompt_tokens_estimated
    assert call.usage.completion_tokens == len(pieces(LONG)) == 26
    assert call.usage.prompt_tokens == estimate_prompt_tokens(ASK) == estimate_tokens(ASK[0]["content"]) + 4
    assert len(scripted_llm.requests) == 1, "nothing more was asked of the endpoint"


async def test_n_choices_are_assembled_per_index(scripted_llm):
    scripted_llm.add("coder", Samples(["first", "second answer", "third"]))
    client = _client(scripted_llm.base_url)
    try:
        texts = await client.texts("coder", ASK, n=3)
    finally:
        await client.aclose()
    assert texts == ["first", "second answer", "third"]


@pytest.mark.parametrize("refused", ["stream_options", "stream"])
async def test_an_endpoint_refusing_a_stream_field_is_asked_again_without_it_and_remembered(scripted_llm, refused):
    setattr(scripted_llm, f"reject_{refused}", True)
    scripted_llm.add("coder", "one")
    scripted_llm.add("coder", "two")
    recorder = Recorder()
    client = _client(scripted_llm.base_url, recorder)
    try:
        assert await client.text("coder", ASK) == "one"
        assert await client.text("coder", ASK) == "two"
    finally:
        await client.aclose()
    first, retried, second = scripted_llm.requests
    assert refused in first
    assert refused not in retried and refused not in second
    if refused == "stream_options":
        assert retried["stream"] is True and second["stream"] is True
    assert [c.answer for c in recorder.calls] == ["one", "two"]
    assert recorder.calls[0].usage.completion_tokens > 0


async def test_a_stalled_stream_is_given_up_in_about_llm_stall_s_and_retried(scripted_llm):
    scripted_llm.add("coder", Fault.stall(60, after=2, then=LONG))
    scripted_llm.add("coder", LONG)
    recorder = Recorder()
    client = _client(scripted_llm.base_url, recorder, llm_stall_s=1.0, llm_deadline_s=60)
    started = time.monotonic()
    try:
        text = await client.text("coder", ASK)
    finally:
        await client.aclose()
    assert text == LONG
    assert recorder.calls[0].attempts == 2
    assert time.monotonic() - started < 30, "the stall ended the attempt, not the 60 s deadline"


async def test_streams_that_keep_stalling_end_with_a_cause_naming_the_stall(scripted_llm):
    scripted_llm.default("coder", Fault.stall(60, after=1, then=LONG))
    client = _client(scripted_llm.base_url, llm_stall_s=0.5, llm_deadline_s=60, max_retries=1)
    try:
        with pytest.raises(LLMUnavailable) as caught:
            await client.text("coder", ASK)
    finally:
        await client.aclose()
    assert str(caught.value) == (
        f"endpoint {scripted_llm.base_url} stalled: no bytes for 0.5 s mid-answer (llm_stall_s) (2 attempts)"
    )


async def test_a_slow_but_steady_stream_outlives_the_deadline(scripted_llm, monkeypatch):
    monkeypatch.setattr(retrying, "WAIT_REPORT_S", 0.5)
    scripted_llm.add("coder", Fault.slow(0.1, LONG))  # 26 pieces: about 2.6 s
    recorder, waits = Recorder(), []
    client = _client(scripted_llm.base_url, recorder, waits, llm_stall_s=1.0, llm_deadline_s=1.5)
    try:
        text = await client.text("coder", ASK)
    finally:
        await client.aclose()
    assert text == LONG
    (call,) = recorder.calls
    assert call.attempts == 1 and call.duration_s > 1.5
    tokens = [t for _, _, t in waits]
    assert tokens and tokens == sorted(tokens) and 0 < tokens[-1] <= 26, "waiting reported the tokens so far"


async def test_keep_alive_pings_while_the_prompt_is_read_count_as_life(scripted_llm):
    scripted_llm.add("coder", Fault.pings(2.5, 0.25, LONG))  # like llama-cpp-python's `: ping` comments
    client = _client(scripted_llm.base_url, llm_stall_s=1.0, llm_deadline_s=1.5)
    try:
        assert await client.text("coder", ASK) == LONG
    finally:
        await client.aclose()
    assert len(scripted_llm.requests) == 1


async def test_a_hang_before_the_headers_is_given_up_within_the_deadline(scripted_llm):
    scripted_llm.default("coder", Fault.hang(60))
    client = _client(scripted_llm.base_url, llm_stall_s=1.0, llm_deadline_s=2.5, max_retries=5)
    started = time.monotonic()
    try:
        with pytest.raises(LLMUnavailable) as caught:
            await client.text("coder", ASK)
    finally:
        await client.aclose()
    message = str(caught.value)
    assert f"endpoint {scripted_llm.base_url} timed out after 1 s" in message
    assert message.endswith("no answer within the 2.5 s deadline of one model call (llm_deadline_s)")
    assert len(scripted_llm.requests) in (2, 3)
    assert time.monotonic() - started < 10


async def test_a_dropped_stream_is_retried(scripted_llm):
    scripted_llm.add("coder", Fault.drop(after=3, then=LONG))
    scripted_llm.add("coder", LONG)
    recorder = Recorder()
    client = _client(scripted_llm.base_url, recorder)
    try:
        assert await client.text("coder", ASK) == LONG
    finally:
        await client.aclose()
    assert recorder.calls[0].attempts == 2


async def test_streams_that_keep_dropping_end_with_a_cause_naming_it(scripted_llm):
    scripted_llm.default("coder", Fault.drop(after=3, then=LONG))
    client = _client(scripted_llm.base_url, max_retries=1)
    try:
        with pytest.raises(LLMUnavailable, match="dropped the connection mid-answer"):
            await client.text("coder", ASK)
    finally:
        await client.aclose()


async def test_the_cap_cuts_a_streaming_answer_and_keeps_what_arrived_without_a_retry(scripted_llm):
    scripted_llm.default("coder", Fault.slow(0.2, LONG))  # about 5.2 s
    recorder = Recorder()
    client = _client(scripted_llm.base_url, recorder, llm_stall_s=1.0, llm_deadline_s=1.0, llm_answer_cap_s=1.5)
    started = time.monotonic()
    try:
        text = await client.text("coder", ASK)
    finally:
        await client.aclose()
    assert time.monotonic() - started < 4.0, "cut at the cap, not streamed to the end"
    assert text and LONG.startswith(text) and len(text) < len(LONG), text
    (call,) = recorder.calls
    assert call.answer == text and call.usage.completion_tokens > 0
    assert len(scripted_llm.requests) == 1


async def test_the_cap_ends_a_call_whose_answer_has_not_started_without_a_retry(scripted_llm):
    scripted_llm.default("coder", Fault.pings(5.0, 0.25, LONG))  # the prompt still being read at the cap
    client = _client(scripted_llm.base_url, llm_stall_s=1.0, llm_deadline_s=1.0, llm_answer_cap_s=1.5)
    try:
        with pytest.raises(LLMUnavailable) as caught:
            await client.text("coder", ASK)
    finally:
        await client.aclose()
    assert str(caught.value) == (
        f"endpoint {scripted_llm.base_url} was still streaming its answer after 1.5 s (llm_answer_cap_s)"
    )
    assert len(scripted_llm.requests) == 1


async def test_an_interrupted_stream_is_asked_again_without_streaming_and_remembered(scripted_llm):
    scripted_llm.add("coder", Fault.interrupt(after=2, then=LONG))  # llama-cpp-python's interrupt_requests
    scripted_llm.add("coder", LONG)
    scripted_llm.add("coder", "second")
    client = _client(scripted_llm.base_url)
    try:
        assert await client.text("coder", ASK) == LONG
        assert await client.text("coder", ASK) == "second"
    finally:
        await client.aclose()
    assert [bool(r.get("stream")) for r in scripted_llm.requests] == [True, False, False]
