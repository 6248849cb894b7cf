"""Plain text answers (the coder's code blocks): no response format, retried, accounted, recorded."""

from __future__ import annotations

from testkit.scripted_llm import Fault


async def test_a_text_answer_is_retried_after_a_429_and_accounted(scripted_llm, make_client, recorder):
    scripted_llm.add("coder", Fault.status(429, times=1))
    scripted_llm.add("coder", "### calc.py\n```python\ndef add(a, b):\n    return a + b\n```")
    client = make_client(temperature=0.2)

    answer = await client.text("coder", [{"role": "user", "content": "fix add"}], temperature=0.9, max_tokens=300)

    assert answer == "### calc.py\n```python\ndef add(a, b):\n    return a + b\n```"
    request = scripted_llm.requests_for("coder")[-1]
    assert "response_format" not in request and request["temperature"] == 0.9
    assert request["max_tokens"] == 300, "a small model may loop until its context is full: every call is capped"
    (call,) = recorder.calls
    assert (call.role, call.mode, call.schema_name, call.attempts) == ("coder", "text", "text", 2)
    usage = client.usage_by_role()["coder"]
    assert usage.llm_calls == 1 and usage.prompt_tokens > 0 and usage.completion_tokens > 0
