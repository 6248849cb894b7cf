"""The model filling holes through the real openai client and the scripted endpoint: fill-in-the-middle with
raw FIM tokens, the suffix parameter, the chat fallback; usage counted; a misbehaving endpoint gives a clear
error and no candidates."""

from __future__ import annotations

import json
from collections.abc import AsyncIterator, Callable
from typing import Any

import pytest

from agent_core.journal.render import render_text
from agent_core.journal.writer import Journal
from agent_core.llm.fim import QWEN_TOKENS, FimSpec
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.llm.retrying import RetryPolicy
from agent_core.search.infill import (
    INFILL_ACCOUNT,
    InfillOptions,
    holes_at,
    infill_candidates,
    infill_hole,
    infill_holes,
)
from agent_core.search.infill.generate import MAX_HOLE_TOKENS, SATURATED, SLOT_TOKENS, hole_tokens
from agent_core.settings import Settings
from testkit.scripted_llm import Fault

SOURCE = "import math\n\n\ndef add(a, b):\n    total = a - b\n    return total\n"
SOURCES = {"calc.py": SOURCE}


@pytest.fixture
async def make_client(scripted_llm) -> AsyncIterator[Callable[..., OpenAIChatClient]]:
    made: list[OpenAIChatClient] = []

    def build(**overrides: Any) -> OpenAIChatClient:
        settings = Settings(**{"base_url": scripted_llm.base_url, "request_timeout_s": 2.0, "max_retries": 1,
                               "model": "qwen2.5-coder-1.5b", **overrides})
        client = OpenAIChatClient(settings, retry_policy=RetryPolicy(max_retries=1, base_s=0.01, max_s=0.02))
        made.append(client)
        return client

    yield build
    for client in made:
        await client.aclose()


def _line_hole():
    return next(h for h in holes_at("calc.py", SOURCE, 5) if h.kind == "line")


async def test_fim_tokens_in_a_raw_prompt_give_deduplicated_candidates(scripted_llm, make_client):
    answers = ["    total = a + b\n", "total = a+b", "    total = b + a\n", "    total = a - b\n", "    total = (a +"]
    for answer in answers:
        scripted_llm.add(INFILL_ACCOUNT, answer)
    client = make_client()

    (report,) = await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=5, seed=11))

    requests = scripted_llm.requests_for(INFILL_ACCOUNT)
    expected = ("<|fim_prefix|>import math\n\n\ndef add(a, b):\n<|fim_suffix|>    return total\n<|fim_middle|>")
    assert {r["prompt"] for r in requests} == {expected}, "one prompt, the same for every sample (prompt cache)"
    assert [r["seed"] for r in requests] == [11, 12, 13, 14, 15]
    assert requests[0]["temperature"] == 0.2 and requests[-1]["temperature"] == 1.0
    assert all(r["max_tokens"] == 60 and "suffix" not in r for r in requests)
    assert requests[0]["stop"] == ["<|endoftext|>", "<|fim_pad|>", "\n\n\n", "\n    return total"], \
        "the model's end tokens, a blank gap, and the line after the hole (its code, written again)"
    assert [m.text for m in report.mutants] == ["    total = a + b", "    total = b + a"]
    assert (report.dialect, report.drawn, report.answered, report.kept, report.error) == ("tokens", 5, 5, 2, None)
    assert report.unchanged == report.as_dict()["unchanged"] == 1, \
        "the answer that wrote the line back is counted, the repeated candidate is not"
    usage = client.usage_by_role()[INFILL_ACCOUNT]
    assert usage.llm_calls == 5 and report.tokens == usage.tokens > 0
    assert report.mutants[0].applied(SOURCE).splitlines()[4] == "    total = a + b"
    assert report.as_dict()["hole"] == "line 5 (line)"


async def test_the_chat_fallback_asks_for_only_the_lines(scripted_llm, make_client):
    scripted_llm.add(INFILL_ACCOUNT, "Here is the fix:\n```python\n    total = a + b\n```\n")
    scripted_llm.add(INFILL_ACCOUNT, "I cannot see the bug.")
    client = make_client(model="gpt-4o-mini")

    (report,) = await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=2))

    request = scripted_llm.requests_for(INFILL_ACCOUNT)[0]
    assert "prompt" not in request and request["messages"][0]["role"] == "system"
    user = request["messages"][1]["content"]
    assert "def add(a, b):\n    <HOLE>\n    return total" in user and "    total = a - b" in user
    assert report.dialect == "chat" and [m.text for m in report.mutants] == ["    total = a + b"]
    assert report.answered == 2 and report.kept == 1, "prose is no candidate"


async def test_a_shown_hole_puts_the_old_line_above_the_fim_hole_and_is_not_asked_in_chat(scripted_llm, make_client):
    holes = sorted((h for h in holes_at("calc.py", SOURCE, 5) if h.kind in ("shown", "line")),
                   key=lambda h: h.kind != "shown")  # as spread_holes asks them
    scripted_llm.add(INFILL_ACCOUNT, "# fixed line:\n    total = a + b\n")
    fim, chat = make_client(), make_client(model="gpt-4o-mini")

    (shown, _) = await infill_candidates(fim, holes, SOURCES, InfillOptions(samples=1))

    first = scripted_llm.requests_for(INFILL_ACCOUNT)[0]["prompt"]
    assert first == ("<|fim_prefix|>import math\n\n\ndef add(a, b):\n    # buggy line: total = a - b\n"
                     "<|fim_suffix|>    return total\n<|fim_middle|>")
    assert [m.text for m in shown.mutants] == ["    total = a + b"], "the comment the model began with dropped"
    assert shown.as_dict()["hole"] == "line 5 (shown)"
    scripted_llm.add(INFILL_ACCOUNT, "```python\n    total = a + b\n```\n")
    reports = await infill_candidates(chat, holes, SOURCES, InfillOptions(samples=1))
    assert [r.hole.kind for r in reports] == ["line"], "a chat prompt shows the old line anyway"
    chats = [r for r in scripted_llm.requests_for(INFILL_ACCOUNT) if "messages" in r]
    assert len(chats) == 1 and reports[0].kept == 1


async def test_the_suffix_dialect_sends_the_code_after_as_suffix(scripted_llm, make_client):
    scripted_llm.add(INFILL_ACCOUNT, "    total = a + b\n")
    client = make_client(fim="suffix")

    (report,) = await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=1))

    request = scripted_llm.requests_for(INFILL_ACCOUNT)[0]
    assert request["prompt"] == "import math\n\n\ndef add(a, b):\n" and request["suffix"] == "    return total\n"
    assert report.kept == 1


async def test_the_failure_text_is_an_option_put_at_the_top(scripted_llm, make_client):
    scripted_llm.default(INFILL_ACCOUNT, "    total = a + b\n")
    client = make_client()

    await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=1))
    await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=1, failure="assert -1 == 3"))

    plain, told = (r["prompt"] for r in scripted_llm.requests_for(INFILL_ACCOUNT))
    assert "assert" not in plain
    assert told.startswith("<|fim_prefix|># The failing test says:\n# assert -1 == 3\n\nimport math\n")


@pytest.mark.parametrize("fault, cause", [(Fault.status(500, times=10), "HTTP 500"), (Fault.malformed(), "malformed")])
async def test_a_misbehaving_endpoint_gives_a_clear_error_and_no_candidates(scripted_llm, make_client, fault, cause):
    scripted_llm.default(INFILL_ACCOUNT, fault)
    client = make_client()
    holes = holes_at("calc.py", SOURCE, 5)
    assert len(holes) > 1

    reports = [r async for r in infill_holes(client, holes, SOURCES, InfillOptions(samples=4))]

    (report,) = reports
    assert report.stopped and cause in (report.error or "") and report.mutants == []
    assert report.drawn == 1 and report.answered == 0, "no further sample or hole once the endpoint fails"
    assert client.usage_by_role()[INFILL_ACCOUNT].llm_calls == 1


async def test_an_unreachable_endpoint_is_one_report(make_client):
    client = make_client(base_url="http://127.0.0.1:9/v1")
    reports = await infill_candidates(client, holes_at("calc.py", SOURCE, 5), SOURCES, InfillOptions(samples=3))
    assert len(reports) == 1 and reports[0].stopped and "unreachable" in (reports[0].error or "")


async def test_a_candidate_another_hole_made_is_not_made_again(scripted_llm, make_client):
    scripted_llm.default(INFILL_ACCOUNT, "    total = a + b\n")
    client = make_client()
    line, before = _line_hole(), next(h for h in holes_at("calc.py", SOURCE, 5) if h.kind == "before")

    reports = await infill_candidates(client, [line, line, before], SOURCES, InfillOptions(samples=2))

    assert [r.kept for r in reports] == [1, 0, 1], "the before slot's text makes another file: a new candidate"
    assert reports[2].mutants[0].text == "    total = a + b\n    total = a - b"


async def test_infill_calls_are_journalled_and_shown_in_the_trace(scripted_llm, tmp_path):
    scripted_llm.default(INFILL_ACCOUNT, "    total = a + b\n")
    journal = Journal(tmp_path, "20261202-000000-infl")
    settings = Settings(base_url=scripted_llm.base_url, model="qwen2.5-coder-1.5b")
    async with OpenAIChatClient(settings, observer=journal) as client:
        await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=2))

    records = [json.loads(line) for line in journal.path.read_text().splitlines()]
    calls = [r for r in records if r["type"] == "llm_call"]
    assert [(c["role"], c["mode"]) for c in calls] == [(INFILL_ACCOUNT, "completion")] * 2
    trace = render_text(tmp_path, "20261202-000000-infl")
    assert "LLM infill -> text (completion)" in trace and "<|fim_prefix|>import math" in trace


async def test_a_hole_whose_answers_only_repeat_is_left_after_a_few(scripted_llm, make_client):
    scripted_llm.default(INFILL_ACCOUNT, "    total = a + b\n")
    client = make_client()

    (report,) = await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=10))

    assert report.kept == 1 and report.saturated
    assert report.drawn == 1 + SATURATED == client.usage_by_role()[INFILL_ACCOUNT].llm_calls, \
        "three answers in a row that made nothing new end the hole's sampling"
    assert report.as_dict()["saturated"] is True


async def test_a_larger_hole_gets_room_for_a_longer_answer(scripted_llm, make_client):
    source = ("def pick(items, key):\n    out = [\n        item\n        for item in items\n"
              "        if item.get(key) is not None\n    ]\n    return out\n")
    statement = next(h for h in holes_at("pick.py", source, 2) if h.kind == "statement")
    slot = next(h for h in holes_at("pick.py", source, 2) if h.kind == "before")
    scripted_llm.default(INFILL_ACCOUNT, "    out = []\n")
    client = make_client()

    await infill_candidates(client, [_line_hole(), statement, slot], {**SOURCES, "pick.py": source},
                            InfillOptions(samples=1))

    caps = [r["max_tokens"] for r in scripted_llm.requests_for(INFILL_ACCOUNT)]
    assert caps == [60, hole_tokens(statement), 60 + SLOT_TOKENS]
    assert 60 < hole_tokens(statement) <= MAX_HOLE_TOKENS, "a five-line rewrite is longer than one line's 60 tokens"


async def test_the_failing_tests_code_comes_first_as_another_file(scripted_llm, make_client):
    scripted_llm.default(INFILL_ACCOUNT, "    total = a + b\n")
    client = make_client()
    test = ("tests/test_calc.py", "def test_add():\n    assert add(1, 2) == 3\n")

    await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=1, tests=(test,)))
    await infill_candidates(client, [_line_hole()], SOURCES, InfillOptions(samples=1, tests=(test,)))
    chat = make_client(model="gpt-4o-mini")
    await infill_candidates(chat, [_line_hole()], SOURCES, InfillOptions(samples=1, tests=(test,)))

    raw, again, asked = scripted_llm.requests_for(INFILL_ACCOUNT)
    assert raw["prompt"] == ("<|repo_name|>project\n<|file_sep|>tests/test_calc.py\ndef test_add():\n"
                             "    assert add(1, 2) == 3\n<|file_sep|>calc.py\n<|fim_prefix|>import math\n\n\n"
                             "def add(a, b):\n<|fim_suffix|>    return total\n<|fim_middle|>")
    assert again["prompt"] == raw["prompt"]
    assert "A failing test, in tests/test_calc.py:\n```python\ndef test_add():\n    assert add(1, 2) == 3\n```" \
        in asked["messages"][1]["content"]


GUARD = "def bound(most, least):\n    if most == 0:\n        return None\n    return most - least\n"
STAMP = "import datetime as dt\n\n\ndef stamp(value):\n    return dt.datetime.fromtimestamp(value)\n"


@pytest.mark.parametrize("source, line, kind, answers, prompt_end, marked, ask, want, label", [
    (GUARD, 2, "and", ("least == 1:\n        return None\n", "Sure:\n```python\nleast == 1\n```\n"),
     "def bound(most, least):\n    if most == 0 and <|fim_suffix|>:\n        return None\n    return most - least\n",
     "    if most == 0 and <HOLE>:\n        return None", "misses a clause",
     ["    if most == 0 and least == 1:", "    if most == 0 and least != 1:"], "line 2 (condition and ...)"),
    (STAMP, 5, "arg", ("tz=dt.timezone.utc)\n", "```python\ntz=dt.timezone.utc\n```"),
     "def stamp(value):\n    return dt.datetime.fromtimestamp(value, <|fim_suffix|>)\n",
     "    return dt.datetime.fromtimestamp(value, <HOLE>)\n", "miss an argument",
     ["    return dt.datetime.fromtimestamp(value, tz=dt.timezone.utc)"], "line 5 (argument at column 45)"),
], ids=["a condition's clause", "a call's argument"])
async def test_a_hole_inside_a_line_asks_for_one_expression_there_in_both_dialects(
        scripted_llm, make_client, source, line, kind, answers, prompt_end, marked, ask, want, label):
    hole = next(h for h in holes_at("code.py", source, line) if h.kind == kind)
    for answer in answers:
        scripted_llm.add(INFILL_ACCOUNT, answer)
    fim, chat = make_client(), make_client(model="gpt-4o-mini")

    (raw,) = await infill_candidates(fim, [hole], {"code.py": source}, InfillOptions(samples=1))
    (asked,) = await infill_candidates(chat, [hole], {"code.py": source}, InfillOptions(samples=1))

    first, second = scripted_llm.requests_for(INFILL_ACCOUNT)
    assert first["prompt"].endswith(prompt_end + "<|fim_middle|>")
    assert first["stop"] == ["<|endoftext|>", "<|fim_pad|>", "\n"] and first["max_tokens"] == 32, \
        "one short line: the stream ends at its end"
    content = second["messages"][1]["content"]
    assert marked in content and ask in content
    assert [m.text for m in raw.mutants] == [m.text for m in asked.mutants] == want, \
        "a clause is tried negated too (infill/turned.py), an argument is not"
    assert raw.as_dict()["turned"] == len(want) - 1
    assert raw.as_dict()["hole"] == label and raw.as_dict()["kind"] == kind


@pytest.mark.parametrize("parallel", [4, 1])
async def test_an_endpoint_that_writes_samples_together_gets_a_round_of_them_at_once(scripted_llm, make_client,
                                                                                     parallel):
    answers = ["    total = a + b\n", "    total = b + a\n", "    total = a * b\n", "    total = a - b\n",
               "    total = abs(a - b)\n", "    total = a + b\n", "    total = -a - b\n", "    total = a // b\n"]
    for answer in answers:  # each held a moment, so that the requests of one round overlap at the endpoint
        scripted_llm.add(INFILL_ACCOUNT, Fault.hang(0.3, then=answer))
    client = make_client()
    spec = FimSpec("tokens", QWEN_TOKENS, parallel=parallel)

    report = await infill_hole(client, _line_hole(), SOURCE, spec, InfillOptions(samples=8, seed=3))

    assert scripted_llm.most_in_flight == parallel, "a round's samples are asked at once, and only a round's"
    requests = scripted_llm.requests_for(INFILL_ACCOUNT)
    assert sorted(r["seed"] for r in requests) == list(range(3, 11)), "every sample of the plan, its own seed"
    assert {r["prompt"] for r in requests} == {requests[0]["prompt"]}, "one prompt, so the server shares it"
    assert sorted(m.text for m in report.mutants) == sorted(
        ["    total = a + b", "    total = b + a", "    total = a * b", "    total = abs(a - b)", "    total = -a - b",
         "    total = a // b"])
    assert (report.drawn, report.answered, report.unchanged, report.error) == (8, 8, 1, None)


async def test_a_refused_sample_in_a_round_keeps_the_others_and_ends_the_hole(scripted_llm, make_client):
    for answer in ["    total = a + b\n", Fault.status(400), "    total = b + a\n", "    total = a * b\n"]:
        scripted_llm.add(INFILL_ACCOUNT, Fault.hang(0.2, then=answer) if isinstance(answer, str) else answer)
    scripted_llm.default(INFILL_ACCOUNT, "    total = a % b\n")
    client = make_client()

    report = await infill_hole(client, _line_hole(), SOURCE, FimSpec("tokens", QWEN_TOKENS, parallel=4),
                               InfillOptions(samples=8))

    assert len(scripted_llm.requests_for(INFILL_ACCOUNT)) == 4, "no second round after a refused request"
    assert sorted(m.text for m in report.mutants) == ["    total = a * b", "    total = a + b", "    total = b + a"]
    assert (report.drawn, report.answered, report.stopped) == (4, 3, False) and "400" in (report.error or "")
