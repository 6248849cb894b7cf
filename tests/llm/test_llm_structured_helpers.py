"""Pure tables for the structured-output helpers and the retry policy."""

from __future__ import annotations

import httpx
import openai
import pytest
from llm_support import Verdict
from pydantic import BaseModel

from agent_core.llm.base import LLMError, LLMUnavailable
from agent_core.llm.retrying import FormatRejected, RetryPolicy, _classify, _Retryable
from agent_core.llm.structured import (
    ModeCache,
    extract_json,
    looks_ignored,
    mentions_response_format,
    parse_answer,
    strict_schema,
)


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ('{"a": 1}', {"a": 1}),
        ('  \n{"a": {"b": [1, 2]}}\n', {"a": {"b": [1, 2]}}),
        ('Sure:\n```json\n{"a": 2}\n```\nbye', {"a": 2}),
        ('```\n{"a": 3}\n```', {"a": 3}),
        ('text {"a": "brace } in string", "b": "{"} tail', {"a": "brace } in string", "b": "{"}),
        ('{not json} then {"a": 4}', {"a": 4}),
        ('escaped "quote \\" {" {"a": "x\\"}"}', {"a": 'x"}'}),
        ("[1, 2, 3]", None),
        ("no json here", None),
        ('{"a": 1', None),
        ('{"code": "```python\\nx = {\\"k\\": 1}\\n```"}', {"code": '```python\nx = {"k": 1}\n```'}),
        ('{bad} {"x": 1}\n```json\n{"a": 2}\n```', {"a": 2}),
        ('{"a": 5} and then some prose', {"a": 5}),
        ('{"a": ' * 3000 + "1" + "}" * 3000, None),
    ],
)
def test_extract_json(text, expected):
    assert extract_json(text) == expected


def test_strict_schema_closes_objects_and_detects_optional_fields():
    class Inner(BaseModel):
        x: int

    class Outer(BaseModel):
        inner: Inner
        items: list[Inner]

    class Optional_(BaseModel):
        x: int = 3

    closed, strict = strict_schema(Outer.model_json_schema())
    assert strict is True
    assert closed["additionalProperties"] is False
    assert closed["$defs"]["Inner"]["additionalProperties"] is False
    assert "additionalProperties" not in Outer.model_json_schema()  # the original is untouched
    assert strict_schema(Optional_.model_json_schema())[1] is False


def test_parse_answer_reasons():
    assert parse_answer('{"summary": "s", "priority": 1}', "stop", Verdict)[0] == Verdict(summary="s", priority=1)
    assert parse_answer('{"summary": "s', "length", Verdict) == (
        None,
        "the answer was cut off at the token limit (finish_reason=length) before the JSON ended",
    )
    assert parse_answer("prose", "stop", Verdict) == (None, "no JSON object was found in the answer")
    value, error = parse_answer('{"summary": 1, "priority": 6}', "stop", Verdict)
    assert value is None
    assert error.splitlines() == [
        "summary: Input should be a valid string",
        "priority: Input should be less than or equal to 5",
    ]


def test_looks_ignored_and_rejection_words():
    assert looks_ignored("plain words", "stop")
    assert not looks_ignored('x {"a"', "stop")
    assert not looks_ignored("plain words cut", "length")
    assert mentions_response_format("Unsupported response_format type")
    assert mentions_response_format("invalid JSON Schema for grammar")
    assert not mentions_response_format("CUDA out of memory")


def test_mode_cache_only_moves_down():
    cache = ModeCache()
    assert cache.get("http://h/v1/", "m") == "json_schema"
    cache.downgrade("http://h/v1/", "m", "extract")
    cache.downgrade("http://h/v1", "m", "json_object")
    assert cache.get("http://h/v1", "m") == "extract"
    assert cache.get("http://h/v1", "other-model") == "json_schema"


def test_retry_delay_grows_with_jitter_and_cap():
    policy = RetryPolicy(max_retries=5, base_s=0.1, max_s=0.5)
    for n, low in ((1, 0.1), (2, 0.2), (3, 0.4), (4, 0.5), (9, 0.5)):
        delay = policy.delay(n)
        assert low <= delay <= low + 0.1
    assert 0.5 <= policy.delay(1, retry_after=30) <= 0.6  # Retry-After honoured up to the cap


def _status_error(code: int, message: str) -> openai.APIStatusError:
    request = httpx.Request("POST", "http://h/v1/chat/completions")
    response = httpx.Response(code, request=request, json={"error": {"message": message}})
    return openai.APIStatusError(message, response=response, body={"error": {"message": message}})


@pytest.mark.parametrize(
    ("code", "message", "sent_format", "kind"),
    [
        (400, "response_format json_schema not supported", True, FormatRejected),
        (500, "Unsupported response_format", True, FormatRejected),
        (500, "Unsupported response_format", False, _Retryable),
        (500, "out of memory", True, _Retryable),
        (429, "slow down", True, _Retryable),
        (503, "loading model", False, _Retryable),
        (400, "context length exceeded", True, LLMError),
        (401, "bad key", True, LLMUnavailable),
    ],
)
def test_classify_status_errors(code, message, sent_format, kind):
    failure = _classify(_status_error(code, message), "http://h/v1", 1.0, sent_format)
    assert type(failure) is kind
    assert "\n" not in str(failure) and str(failure).startswith("endpoint http://h/v1 ")
    assert f"HTTP {code} {message}" in str(failure)
