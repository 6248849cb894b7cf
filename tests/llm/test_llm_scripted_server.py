"""The scripted server itself, driven by the real openai client."""

from __future__ import annotations

import json
import threading
import time

import httpx
import openai
import pytest

from testkit.scripted_llm import Fault, ScriptedLLM


def _client(llm: ScriptedLLM, role: str, timeout: float = 5.0) -> openai.OpenAI:
    return openai.OpenAI(
        base_url=llm.base_url,
        api_key="sk-test",
        max_retries=0,
        timeout=timeout,
        default_headers={"X-Agentls-Role": role},
    )


def _ask(client: openai.OpenAI, **extra):
    return client.chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hello there"}], **extra
    )


def test_answers_per_role_in_queue_order(scripted_llm):
    scripted_llm.add("planner", {"n": 1})
    scripted_llm.add("planner", "second")
    scripted_llm.add("coder", {"c": True})
    planner, coder = _client(scripted_llm, "planner"), _client(scripted_llm, "coder")
    first = _ask(planner)
    assert json.loads(first.choices[0].message.content) == {"n": 1}
    assert first.choices[0].finish_reason == "stop"
    assert first.usage.prompt_tokens > 0 and first.usage.completion_tokens > 0
    assert first.usage.total_tokens == first.usage.prompt_tokens + first.usage.completion_tokens
    assert _ask(coder).choices[0].message.content == '{"c": true}'
    assert _ask(planner).choices[0].message.content == "second"
    assert [r["role"] for r in scripted_llm.requests] == ["planner", "coder", "planner"]
    assert len(scripted_llm.requests_for("planner")) == 2
    assert scripted_llm.requests[0]["messages"][0]["content"] == "hello there"


def test_no_answer_is_a_visible_500(scripted_llm):
    with pytest.raises(openai.InternalServerError, match="no scripted answer for role tester"):
        _ask(_client(scripted_llm, "tester"))


def test_default_and_callable_answers(scripted_llm):
    scripted_llm.default("*", lambda body: {"echo": body["messages"][-1]["content"]})
    scripted_llm.default("reflector", "fixed")
    assert _ask(_client(scripted_llm, "coder")).choices[0].message.content == '{"echo": "hello there"}'
    assert _ask(_client(scripted_llm, "reflector")).choices[0].message.content == "fixed"
    assert _ask(_client(scripted_llm, "reflector")).choices[0].message.content == "fixed"


def test_status_fault_repeats_then_answers(scripted_llm):
    scripted_llm.add("coder", Fault.status(429, times=2))
    scripted_llm.add("coder", "ok")
    client = _client(scripted_llm, "coder")
    for _ in range(2):
        with pytest.raises(openai.RateLimitError):
            _ask(client)
    assert _ask(client).choices[0].message.content == "ok"
    assert scripted_llm.pending("coder") == 0


def test_hang_outlasts_client_timeout(scripted_llm):
    scripted_llm.add("coder", Fault.hang(3))
    start = time.monotonic()
    with pytest.raises(openai.APITimeoutError):
        _ask(_client(scripted_llm, "coder", timeout=0.3))
    assert time.monotonic() - start < 2


def test_hang_then_answer(scripted_llm):
    scripted_llm.add("coder", Fault.hang(0.1, then="late"))
    assert _ask(_client(scripted_llm, "coder")).choices[0].message.content == "late"


def test_malformed_body_is_not_json(scripted_llm):
    scripted_llm.add("coder", Fault.malformed())
    response = httpx.post(
        scripted_llm.base_url + "/chat/completions",
        json={"model": "m", "messages": []},
        headers={"X-Agentls-Role": "coder"},
    )
    assert response.status_code == 200
    with pytest.raises(json.JSONDecodeError):
        json.loads(response.text)


def test_truncated_answer_stops_mid_json(scripted_llm):
    scripted_llm.add("coder", Fault.truncated({"summary": "a long enough answer to be cut"}))
    choice = _ask(_client(scripted_llm, "coder")).choices[0]
    assert choice.finish_reason == "length"
    with pytest.raises(json.JSONDecodeError):
        json.loads(choice.message.content)


def test_reject_json_schema_like_llama_cpp(scripted_llm):
    scripted_llm.reject_json_schema = True
    scripted_llm.default("coder", {"ok": 1})
    client = _client(scripted_llm, "coder")
    schema_format = {"type": "json_schema", "json_schema": {"name": "X", "schema": {"type": "object"}}}
    with pytest.raises(openai.InternalServerError, match="response_format"):
        _ask(client, response_format=schema_format)
    answer = _ask(client, response_format={"type": "json_object", "schema": {"type": "object"}})
    assert answer.choices[0].message.content == '{"ok": 1}'


def test_models_and_embeddings(scripted_llm):
    client = _client(scripted_llm, "coder")
    assert [m.id for m in client.models.list().data] == ["scripted"]
    result = client.embeddings.create(model="e", input=["a failing test", "a failing test", "other"])
    vectors = [d.embedding for d in result.data]
    assert vectors[0] == vectors[1] != vectors[2]
    assert abs(sum(v * v for v in vectors[0]) - 1.0) < 1e-9


def test_usable_outside_pytest_as_context_manager():
    with ScriptedLLM() as llm:
        llm.add("planner", "hi")
        assert _ask(_client(llm, "planner")).choices[0].message.content == "hi"
        url = llm.base_url
    with pytest.raises(openai.APIConnectionError):
        _ask(openai.OpenAI(base_url=url, api_key="k", max_retries=0, timeout=2))


def test_a_streamed_answer_is_sse_on_the_wire(scripted_llm):
    scripted_llm.add("coder", "hello world")
    body = {"model": "m", "messages": [{"role": "user", "content": "hi"}], "stream": True,
            "stream_options": {"include_usage": True}}
    with httpx.stream("POST", f"{scripted_llm.base_url}/chat/completions", json=body,
                      headers={"X-Agentls-Role": "coder"}, timeout=5) as response:
        assert response.headers["content-type"] == "text/event-stream"
        lines = [line for line in response.iter_lines() if line]
    assert all(line.startswith("data: ") for line in lines) and lines[-1] == "data: [DONE]"
    chunks = [json.loads(line[len("data: "):]) for line in lines[:-1]]
    assert {c["object"] for c in chunks} == {"chat.completion.chunk"}
    assert "".join(c["choices"][0]["delta"].get("content") or "" for c in chunks if c["choices"]) == "hello world"
    assert [c["choices"][0]["finish_reason"] for c in chunks if c["choices"]][-1] == "stop"
    assert chunks[-1]["choices"] == [] and chunks[-1]["usage"]["completion_tokens"] == 3  # "hell", "o wo", "rld"


def test_a_stream_without_usage_when_the_server_sends_none(scripted_llm):
    scripted_llm.stream_usage = False
    scripted_llm.add("coder", "hello")
    stream = _client(scripted_llm, "coder").chat.completions.create(
        model="m", messages=[{"role": "user", "content": "hi"}], stream=True, stream_options={"include_usage": True}
    )
    chunks = list(stream)
    assert all(c.usage is None for c in chunks)
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == "hello"


def test_stop_ends_in_bounded_time_when_the_serving_loop_is_stuck(monkeypatch):
    import testkit.scripted_llm as scripted

    monkeypatch.setattr(scripted, "STOP_S", 0.5)
    stuck, release = threading.Event(), threading.Event()
    llm = ScriptedLLM().start()
    httpd = llm._httpd

    def hold() -> None:  # the serving loop blocks in its own thread, as it once did on CI
        stuck.set()
        release.wait(30)

    httpd.service_actions = hold
    assert stuck.wait(5)
    began = time.monotonic()
    with pytest.warns(RuntimeWarning, match=r"did not stop within 0.5 s; it was at:[\s\S]*in hold"):
        llm.stop()
    assert time.monotonic() - began < 3, "stop() returned in bounded time"
    release.set()
