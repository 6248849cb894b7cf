"""Role routing, per-role profiles, usage accounting and secrets in call records."""

from __future__ import annotations

import json
import sys
import types

import pytest
from llm_support import API_KEY, GOOD, Verdict

from agent_core.llm.base import LLMUnavailable
from agent_core.llm.factory import make_llm_client
from agent_core.llm.local import NO_ENDPOINT
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.settings import Settings
from agent_core.settings.redact import REDACTED
from testkit.scripted_faults import Fault
from testkit.scripted_llm import ScriptedLLM, estimate_tokens


def _ask(text: str) -> list[dict[str, str]]:
    return [{"role": "user", "content": text}]


async def test_role_header_routes_each_role_to_its_queue(scripted_llm, make_client):
    for role, priority in (("planner", 1), ("coder", 2), ("tester", 3), ("reflector", 4)):
        scripted_llm.add(role, {**GOOD, "priority": priority})
    client = make_client()
    got = {}
    for role in ("reflector", "coder", "planner", "tester"):
        got[role] = (await client.structured(role, _ask(role), Verdict)).priority
    assert got == {"planner": 1, "coder": 2, "tester": 3, "reflector": 4}
    for role in got:
        (request,) = scripted_llm.requests_for(role)
        assert request["messages"][-1]["content"] == role


async def test_role_profiles_pick_endpoint_model_and_temperature(scripted_llm, make_client):
    with ScriptedLLM() as other:
        other.add("coder", {**GOOD, "priority": 5})
        scripted_llm.add("planner", GOOD)
        roles = {"coder": {"base_url": other.base_url, "model": "big-coder", "temperature": 0.0}}
        client = make_client(model="small", temperature=0.7, roles=roles)
        assert (await client.structured("coder", _ask("c"), Verdict)).priority == 5
        assert (await client.structured("planner", _ask("p"), Verdict)).priority == 2
        (coder_request,) = other.requests
        assert coder_request["model"] == "big-coder" and coder_request["role"] == "coder"
        assert coder_request["temperature"] == 0.0
        (planner_request,) = scripted_llm.requests
        assert (planner_request["model"], planner_request["temperature"]) == ("small", 0.7)
        assert len(client._clients) == 2  # one AsyncOpenAI per distinct (base_url, key)
        await client.aclose()


async def test_usage_is_summed_per_role_and_in_total(scripted_llm, make_client):
    scripted_llm.add("planner", GOOD)
    scripted_llm.add("planner", {"summary": "x"})  # invalid: one repair follows
    scripted_llm.add("planner", GOOD)
    scripted_llm.add("coder", {**GOOD, "summary": "a much longer summary " * 20})
    client = make_client()
    await client.structured("planner", _ask("first question"), Verdict)
    await client.structured("planner", _ask("second question"), Verdict)
    await client.structured("coder", _ask("code it " * 50), Verdict)

    def expected(role: str) -> tuple[int, int]:
        requests = scripted_llm.requests_for(role)
        prompt = sum(estimate_tokens("\n".join(m["content"] for m in r["messages"])) for r in requests)
        return prompt, len(requests)

    by_role = client.usage_by_role()
    for role in ("planner", "coder"):
        prompt, calls = expected(role)
        assert (by_role[role].prompt_tokens, by_role[role].llm_calls) == (prompt, calls)
    assert by_role["planner"].llm_calls == 3
    assert by_role["coder"].completion_tokens > by_role["planner"].completion_tokens
    total = client.total_usage()
    assert total.llm_calls == 4
    assert total.prompt_tokens == by_role["planner"].prompt_tokens + by_role["coder"].prompt_tokens
    assert total.completion_tokens == by_role["planner"].completion_tokens + by_role["coder"].completion_tokens


async def test_the_pace_is_the_calls_seconds_per_written_token_per_account(scripted_llm, make_client):
    """A stream writing a token every 0.1 s and a quick one: each account's pace is its own calls' seconds over
    their written tokens, and none is told before `least` calls wrote any."""
    answer = "x = 1 + 2\n"
    for _ in range(2):
        scripted_llm.add("slow", Fault.slow(0.1, answer))  # an account's calls carry its name as their role
    client = make_client()
    assert client.pace("coder") is None, "no call yet"
    await client.complete("coder", "def f():\n", max_tokens=20, account="slow")
    assert client.pace("slow", least=2) is None, "one call wrote tokens, two asked for"
    await client.complete("coder", "def f():\n", max_tokens=20, account="slow")
    scripted_llm.add("quick", answer)
    await client.complete("coder", "def f():\n", max_tokens=20, account="quick")
    slow, quick = client.pace("slow", least=2), client.pace("quick")
    assert slow is not None and quick is not None
    written = client.usage_by_role()["slow"].completion_tokens
    assert written >= 4 and 0.1 <= slow < 0.3, (written, slow)
    assert quick < slow / 2, (quick, slow)


async def test_api_key_is_sent_but_never_recorded(scripted_llm, make_client, recorder):
    scripted_llm.add("planner", {"summary": f"the key is {API_KEY}", "priority": 1})
    client = make_client()
    answer = await client.structured("planner", _ask(f"my key is {API_KEY}, keep it safe"), Verdict)
    assert API_KEY in answer.summary  # the caller gets the real answer
    assert scripted_llm.request_headers[0]["authorization"] == f"Bearer {API_KEY}"
    assert scripted_llm.request_headers[0]["x-agentls-role"] == "planner"
    (call,) = recorder.calls
    dumped = call.model_dump_json()
    assert API_KEY not in dumped
    assert REDACTED in call.messages[-1]["content"] and REDACTED in call.answer
    assert API_KEY not in repr(client.__dict__)


async def test_missing_local_model_package_is_a_clear_error(monkeypatch):
    monkeypatch.setitem(sys.modules, "agent_core.local_model.endpoint", None)
    monkeypatch.setitem(sys.modules, "agent_core.local_model", None)
    client = OpenAIChatClient(Settings(base_url=None))
    with pytest.raises(LLMUnavailable) as caught:
        await client.structured("planner", _ask("hi"), Verdict)
    assert str(caught.value) == NO_ENDPOINT


async def test_no_base_url_asks_the_local_model_for_an_endpoint(scripted_llm, monkeypatch):
    asked = []

    def ensure_local_endpoint(settings):
        asked.append(settings.local_model)
        return scripted_llm.base_url

    fake = types.ModuleType("agent_core.local_model.endpoint")
    fake.ensure_local_endpoint = ensure_local_endpoint
    monkeypatch.setitem(sys.modules, "agent_core.local_model.endpoint", fake)
    scripted_llm.default("planner", GOOD)
    client = make_llm_client(Settings(base_url=None))
    assert await client.structured("planner", _ask("a"), Verdict) == Verdict(**GOOD)
    await client.structured("planner", _ask("b"), Verdict)
    assert asked == ["qwen2.5-coder-1.5b"]  # started once, then reused
    await client.aclose()


async def test_factory_builds_the_openai_client_with_the_observer(recorder):
    client = make_llm_client(Settings(base_url="http://127.0.0.1:1/v1", max_retries=4), observer=recorder)
    assert isinstance(client, OpenAIChatClient)
    assert client._observer is recorder and client._policy.max_retries == 4
    empty = {"prompt_tokens": 0, "completion_tokens": 0, "llm_calls": 0}
    assert json.loads(client.total_usage().model_dump_json()) == empty
