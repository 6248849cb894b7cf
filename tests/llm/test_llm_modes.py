"""The structured-output mode ladder, with the real openai client against the scripted server."""

from __future__ import annotations

import json

import pytest
from llm_support import GOOD, Verdict

from agent_core.llm.base import StructuredOutputError
from agent_core.llm.openai_client import OpenAIChatClient
from testkit.scripted_llm import Fault

ASK = [{"role": "system", "content": "You triage bugs."}, {"role": "user", "content": "What is wrong?"}]
SHAPE = '{"summary": string, "priority": integer 1-5}'
SYSTEM_WITH_SHAPE = "You triage bugs.\n\nAnswer with exactly one JSON object of this shape (no prose):\n" + SHAPE


async def test_json_schema_mode_when_the_endpoint_supports_it(scripted_llm, make_client, recorder):
    scripted_llm.add("planner", GOOD)
    answer = await make_client().structured("planner", ASK, Verdict)
    assert answer == Verdict(**GOOD)
    (request,) = scripted_llm.requests
    fmt = request["response_format"]
    assert fmt["type"] == "json_schema"
    assert fmt["json_schema"]["name"] == "Verdict"
    assert fmt["json_schema"]["strict"] is True
    assert fmt["json_schema"]["schema"]["additionalProperties"] is False
    assert request["messages"] == ASK
    assert [c.mode for c in recorder.calls] == ["json_schema"]


async def test_rejected_json_schema_falls_back_to_json_object_and_is_learned(scripted_llm, make_client, recorder):
    scripted_llm.reject_json_schema = True
    scripted_llm.add("coder", GOOD)
    scripted_llm.add("coder", {**GOOD, "priority": 4})
    scripted_llm.add("coder", {**GOOD, "priority": 5})
    client = make_client()
    assert (await client.structured("coder", ASK, Verdict)).priority == 2
    kinds = [r.get("response_format", {}).get("type") for r in scripted_llm.requests]
    assert kinds == ["json_schema", "json_object"]
    sent = scripted_llm.requests[1]
    assert sent["response_format"]["schema"] == Verdict.model_json_schema()
    # the full schema constrains the output; the prompt carries only the compact shape
    assert sent["messages"][0]["content"] == SYSTEM_WITH_SHAPE
    assert sent["messages"][1:] == ASK[1:]
    # learned: the next call (even from a new client) goes straight to json_object, no second 500
    assert (await client.structured("coder", ASK, Verdict)).priority == 4
    assert (await make_client().structured("coder", ASK, Verdict)).priority == 5
    kinds = [r.get("response_format", {}).get("type") for r in scripted_llm.requests]
    assert kinds == ["json_schema", "json_object", "json_object", "json_object"]
    assert OpenAIChatClient.modes.get(scripted_llm.base_url, "qwen2.5-coder-1.5b") == "json_object"
    assert [c.mode for c in recorder.calls] == ["json_object"] * 3


async def test_garbage_answer_leads_to_extract_then_repair(scripted_llm, make_client, recorder):
    scripted_llm.reject_json_schema = True
    scripted_llm.add("reflector", "I think the test fails because of an off-by-one.")  # json_object ignored
    scripted_llm.add("reflector", 'Here it is: {"summary": "off by one", "priority": 9} hope it helps')
    scripted_llm.add("reflector", 'Fixed:\n```json\n{"summary": "off by one", "priority": 5}\n```\n')
    answer = await make_client().structured("reflector", ASK, Verdict)
    assert answer == Verdict(summary="off by one", priority=5)
    assert [c.mode for c in recorder.calls] == ["json_object", "extract", "extract"]
    extract_request, repair_request = scripted_llm.requests[-2:]
    assert "response_format" not in extract_request
    assert extract_request["messages"][0]["content"] == SYSTEM_WITH_SHAPE
    repair_prompt = repair_request["messages"][-1]["content"]
    assert "priority: Input should be less than or equal to 5" in repair_prompt
    assert repair_prompt.endswith("of this shape (no prose):\n" + SHAPE)  # the shape travels with the repair
    assert "maximum" not in repair_prompt and "$defs" not in repair_prompt
    bad = 'Here it is: {"summary": "off by one", "priority": 9} hope it helps'
    assert repair_request["messages"][-2] == {"role": "assistant", "content": bad}
    assert OpenAIChatClient.modes.get(scripted_llm.base_url, "qwen2.5-coder-1.5b") == "extract"


async def test_schema_invalid_answer_gets_one_repair_request(scripted_llm, make_client):
    scripted_llm.add("planner", {"summary": "x"})  # priority missing
    scripted_llm.add("planner", {"summary": "x", "priority": 3})
    assert (await make_client().structured("planner", ASK, Verdict)).priority == 3
    first, repair = scripted_llm.requests
    assert repair["response_format"]["type"] == "json_schema"  # repair stays in the working mode
    assert "priority: Field required" in repair["messages"][-1]["content"]


async def test_failed_repair_raises_structured_output_error(scripted_llm, make_client, recorder):
    scripted_llm.add("tester", {"summary": "x", "priority": 0})
    scripted_llm.add("tester", {"summary": "x", "priority": 7})
    scripted_llm.default("tester", GOOD)  # never reached: only one repair is allowed
    with pytest.raises(StructuredOutputError) as caught:
        await make_client().structured("tester", ASK, Verdict)
    message = str(caught.value)
    assert "\n" not in message
    assert "Verdict" in message and "priority" in message
    assert len(scripted_llm.requests) == 2
    assert len(recorder.calls) == 2


async def test_truncated_answer_is_repaired(scripted_llm, make_client):
    scripted_llm.add("coder", Fault.truncated(GOOD))
    scripted_llm.add("coder", GOOD)
    client = make_client()
    assert await client.structured("coder", ASK, Verdict) == Verdict(**GOOD)
    repair_prompt = scripted_llm.requests[1]["messages"][-1]["content"]
    assert "cut off at the token limit" in repair_prompt
    assert client.usage_by_role()["coder"].llm_calls == 2
    # a truncated answer is not mistaken for an endpoint that ignores the format
    assert OpenAIChatClient.modes.get(scripted_llm.base_url, "qwen2.5-coder-1.5b") == "json_schema"


async def test_non_strict_schema_is_sent_non_strict(scripted_llm, make_client):
    from pydantic import BaseModel

    class Loose(BaseModel):
        name: str
        note: str | None = None

    scripted_llm.add("planner", {"name": "n"})
    assert (await make_client().structured("planner", ASK, Loose)).name == "n"
    assert scripted_llm.requests[0]["response_format"]["json_schema"]["strict"] is False
    assert json.dumps(scripted_llm.requests[0]["response_format"]).count("additionalProperties") == 1
