"""The counting proxy the Aider comparison relies on: forwards faithfully, counts the upstream's usage."""

from __future__ import annotations

import openai

from bench.support.token_proxy import TokenProxy, _usage_of
from testkit.scripted_llm import ScriptedLLM


def test_proxy_forwards_and_counts_usage():
    with ScriptedLLM() as upstream, TokenProxy(upstream.base_url) as proxy:
        upstream.default("*", "hello there")
        client = openai.OpenAI(base_url=proxy.base_url, api_key="none", max_retries=0)
        answers = [
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "x" * n}])
            for n in (40, 400)
        ]
        assert [a.choices[0].message.content for a in answers] == ["hello there", "hello there"]
        expected_prompt = sum(a.usage.prompt_tokens for a in answers)
        expected_completion = sum(a.usage.completion_tokens for a in answers)
        assert proxy.totals() == {
            "prompt_tokens": expected_prompt, "completion_tokens": expected_completion, "llm_calls": 2,
        }
        assert len(upstream.requests) == 2
        proxy.reset()
        assert proxy.totals()["llm_calls"] == 0


def test_usage_from_a_stream():
    body = (b'data: {"choices":[{"delta":{"content":"a"}}]}\n\n'
            b'data: {"choices":[],"usage":{"prompt_tokens":7,"completion_tokens":3}}\n\ndata: [DONE]\n\n')
    assert _usage_of(body) == {"prompt_tokens": 7, "completion_tokens": 3}
    assert _usage_of(b"not json at all") is None
