"""Raw completions (`/v1/completions`, the fill-in-the-middle requests): sent by the real openai client to the
scripted server, streamed or not, capped, accounted and journalled like chat calls, failing clearly."""

from __future__ import annotations

import pytest

from agent_core.llm.base import BudgetSpent, LLMUnavailable
from agent_core.llm.openai_client import COMPLETION_MAX_TOKENS
from testkit.scripted_llm import Fault

FIM = "<|fim_prefix|>def add(a, b):\n<|fim_suffix|>\n<|fim_middle|>"


async def test_a_raw_completion_is_streamed_accounted_and_journalled(scripted_llm, make_client, recorder):
    scripted_llm.add("coder", "    return a + b\n")
    client = make_client()

    answer = await client.complete("coder", FIM, max_tokens=60, temperature=0.7, seed=3, stop=["<|endoftext|>"])

    assert answer == "    return a + b\n"
    (request,) = scripted_llm.requests_for("coder")
    assert request["prompt"] == FIM and "messages" not in request, "the FIM prompt goes to /v1/completions as it is"
    assert (request["max_tokens"], request["temperature"], request["seed"]) == (60, 0.7, 3)
    assert request["stop"] == ["<|endoftext|>"] and request["stream"] is True and "suffix" not in request
    (call,) = recorder.calls
    assert (call.role, call.mode, call.schema_name) == ("coder", "completion", "text")
    assert call.messages == [{"role": "prompt", "content": FIM}] and call.answer == answer
    usage = client.usage_by_role()["coder"]
    assert usage.llm_calls == 1 and usage.prompt_tokens > 0 and usage.completion_tokens == call.usage.completion_tokens
    assert not call.prompt_tokens_estimated, "the stream's usage chunk counted the prompt"


async def test_a_streamed_completion_ends_where_the_caller_has_enough(scripted_llm, make_client, recorder):
    lines = "".join(f"    x{i} = {i}\n" for i in range(40))
    scripted_llm.add("coder", lines)  # counted whole: the endpoint's own count of the prompt
    scripted_llm.add("coder", Fault.slow(0.02, lines))
    client = make_client()
    await client.complete("coder", FIM, max_tokens=400)
    whole = client.usage_by_role()["coder"].prompt_tokens

    answer = await client.complete("coder", FIM, max_tokens=400, until=lambda text: text.count("\n") >= 2)

    assert answer.startswith("    x0 = 0\n    x1 = 1\n") and len(answer) < len(lines) // 4, answer
    last = recorder.calls[-1]
    assert last.answer == answer and 0 < last.usage.completion_tokens < 40
    assert last.usage.prompt_tokens == whole and not last.prompt_tokens_estimated, "the earlier count, no estimate"
    assert client.usage_by_role()["coder"].llm_calls == 2


async def test_another_models_cut_stream_of_the_same_prompt_is_estimated(scripted_llm, make_client, recorder):
    """The remembered count is one model's: another tokenizer counts the same text differently."""
    lines = "".join(f"    x{i} = {i}\n" for i in range(40))
    scripted_llm.add("coder", lines)
    scripted_llm.add("planner", Fault.slow(0.02, lines))
    client = make_client(model="small", roles={"planner": {"model": "other"}})
    await client.complete("coder", FIM, max_tokens=400)
    whole = client.usage_by_role()["coder"].prompt_tokens

    await client.complete("planner", FIM, max_tokens=400, until=lambda text: text.count("\n") >= 2)

    last = recorder.calls[-1]
    assert [r["model"] for r in scripted_llm.requests] == ["small", "other"]
    assert last.prompt_tokens_estimated and last.usage.prompt_tokens > 0
    assert last.usage.prompt_tokens != whole, "not the other model's count of the prompt"


async def test_an_unstreamed_completion_with_suffix_and_account(scripted_llm, make_client, recorder):
    scripted_llm.reject_stream = True
    scripted_llm.add("infill", "return a + b<|endoftext|>ignored")
    client = make_client()

    answer = await client.complete("coder", "def add(a, b):\n    ", max_tokens=10_000, suffix="\n\nprint(add(1, 2))\n",
                                   stop=["<|endoftext|>"], account="infill")

    assert answer == "return a + b", "the server stops before a stop string"
    request = scripted_llm.requests_for("infill")[-1]
    assert "stream" not in request and request["suffix"] == "\n\nprint(add(1, 2))\n"
    assert request["max_tokens"] == COMPLETION_MAX_TOKENS, "every raw completion is capped"
    assert set(client.usage_by_role()) == {"infill"}, "accounted under the borrowing caller's name"
    assert recorder.calls[-1].messages[-1] == {"role": "suffix", "content": "\n\nprint(add(1, 2))\n"}


async def test_a_failing_completion_endpoint_is_retried_then_reported(scripted_llm, make_client):
    scripted_llm.add("coder", Fault.status(500, times=5))
    client = make_client()

    with pytest.raises(LLMUnavailable, match="HTTP 500"):
        await client.complete("coder", FIM, max_tokens=20)

    assert len(scripted_llm.requests_for("coder")) == 3, "the first request and max_retries=2 retries"
    assert client.usage_by_role()["coder"].llm_calls == 1


async def test_a_garbage_completion_body_is_a_clear_error(scripted_llm, make_client):
    scripted_llm.default("coder", Fault.malformed())
    client = make_client()

    with pytest.raises(LLMUnavailable, match="malformed"):
        await client.complete("coder", FIM, max_tokens=20)


async def test_a_spent_token_budget_stops_a_completion_before_it_is_sent(scripted_llm, make_client):
    scripted_llm.default("coder", "    return a + b\n")
    client = make_client(token_budget=5)
    await client.complete("coder", FIM * 10, max_tokens=60)  # spends more than the whole budget

    with pytest.raises(BudgetSpent):
        await client.complete("coder", FIM, max_tokens=60)
    assert len(scripted_llm.requests_for("coder")) == 1


async def test_chat_requests_still_go_to_the_chat_endpoint(scripted_llm, make_client):
    scripted_llm.add("coder", "plain")
    client = make_client()

    assert await client.text("coder", [{"role": "user", "content": "hi"}], max_tokens=5) == "plain"
    assert "prompt" not in scripted_llm.requests_for("coder")[-1]


async def test_a_completion_that_never_starts_times_out_clearly(scripted_llm, make_client):
    scripted_llm.default("coder", Fault.hang(5.0))
    client = make_client(request_timeout_s=0.3, max_retries=0)

    with pytest.raises(LLMUnavailable, match="timed out"):
        await client.complete("coder", FIM, max_tokens=20)


async def test_a_completion_stream_that_stalls_is_retried(scripted_llm, make_client):
    scripted_llm.add("coder", Fault.stall(5.0, after=1, then="    return a + b\n"))
    scripted_llm.add("coder", "    return a + b\n")
    client = make_client(llm_stall_s=0.3)

    assert await client.complete("coder", FIM, max_tokens=20) == "    return a + b\n"
    assert len(scripted_llm.requests_for("coder")) == 2
