"""Several answers to one prompt: the endpoint's `n`, else one request per temperature; the fallback profile."""

from __future__ import annotations

import os

import pytest

from agent_core.llm.base import LLMError
from testkit.scripted_llm import Samples, ScriptedLLM

ASK = [{"role": "user", "content": "fix add"}]


async def test_an_endpoint_honouring_n_answers_all_in_one_request(scripted_llm, make_client, recorder):
    scripted_llm.add("coder", Samples(["a", "b", "c"]))
    client = make_client()

    answers = await client.texts("coder", ASK, 3, 0.2, max_tokens=100)

    assert answers == ["a", "b", "c"]
    (request,) = scripted_llm.requests_for("coder")
    assert request["n"] == 3 and request["temperature"] == 0.2
    (call,) = recorder.calls
    assert call.answer == "a" and call.alternatives == ["b", "c"]
    usage = client.usage_by_role()["coder"]
    assert usage.llm_calls == 1 and usage.completion_tokens == 3, "every choice's tokens (one each here)"


async def test_an_endpoint_ignoring_n_gives_one_answer(scripted_llm, make_client):
    scripted_llm.honour_n = False
    scripted_llm.add("coder", Samples(["a", "b", "c"]))
    client = make_client()

    answers = await client.texts("coder", ASK, 3, 0.55)

    assert answers == ["a"]
    (request,) = scripted_llm.requests_for("coder")
    assert (request["n"], request["temperature"]) == (3, 0.55)
    assert client.usage_by_role()["coder"].llm_calls == 1


async def test_an_endpoint_refusing_n_is_asked_without_it_from_then_on(scripted_llm, make_client):
    scripted_llm.reject_n = True
    scripted_llm.default("coder", "same")
    client = make_client()

    first = await client.texts("coder", ASK, 2, 0.2)
    second = await client.texts("coder", ASK, 2, 0.9)

    assert first == second == ["same"]
    sent = [r.get("n") for r in scripted_llm.requests_for("coder")]
    assert sent == [2, None, None], "refused once, then never sent again"


async def test_the_fallback_profile_answers_on_its_own_endpoint_and_account(scripted_llm, make_client, recorder,
                                                                           monkeypatch):
    monkeypatch.setenv("FALLBACK_KEY_FOR_TEST", "sk-fallback-0123")
    with ScriptedLLM() as big:
        big.add("coder", "from the big model")
        scripted_llm.add("coder", "from the small model")
        client = make_client(fallback={"base_url": big.base_url, "model": "big-one",
                                       "api_key_env": "FALLBACK_KEY_FOR_TEST"})

        small = await client.texts("coder", ASK, 1)
        large = await client.texts("coder", ASK, 1, fallback=True)

        assert (small, large) == (["from the small model"], ["from the big model"])
        (request,) = big.requests_for("coder")
        assert request["model"] == "big-one"
        assert big.request_headers[0]["authorization"] == "Bearer sk-fallback-0123"
    by_role = client.usage_by_role()
    assert by_role["coder"].llm_calls == 1 and by_role["fallback"].llm_calls == 1
    assert by_role["fallback"].prompt_tokens > 0
    assert [c.role for c in recorder.calls] == ["coder", "fallback"]
    assert os.environ["FALLBACK_KEY_FOR_TEST"] not in repr(client._settings.fallback_profile("coder"))


async def test_without_a_fallback_profile_asking_for_it_is_an_error(scripted_llm, make_client):
    client = make_client()
    with pytest.raises(LLMError, match="no fallback model"):
        await client.texts("coder", ASK, 1, fallback=True)
    assert scripted_llm.requests_for("coder") == []
