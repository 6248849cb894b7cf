"""One chat completion with retries: backoff on 429 / 5xx / timeouts / connection errors.

`complete()` sends one request through an `openai.AsyncOpenAI` client (whose
own retries are off) and retries transient failures with exponential backoff
plus jitter, all within the policy's total deadline (`llm_deadline_s`): each
attempt gets at most the time left, and no retry starts that could not get
`MIN_ATTEMPT_S` of it. While it waits, `on_wait(elapsed_s)` is called every
`WAIT_REPORT_S` seconds so a front end can show the run is alive. Failures
come out as the LLM seam's exceptions with a one-line cause naming the
endpoint, never the API key. A 4xx/5xx that complains about `response_format`
raises `FormatRejected` at once so the caller can step down the mode ladder.
"""

from __future__ import annotations

import asyncio
import json
import random
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from agent_core.llm.base import LLMError, LLMUnavailable
from agent_core.llm.structured import mentions_response_format
from agent_core.models import Usage

MIN_ATTEMPT_S = 1.0
WAIT_REPORT_S = 10.0
_CONFIG_STATUSES = {401: "rejected the API key", 403: "refused access", 404: "has no such model or route"}


class FormatRejected(LLMError):
    """The endpoint refused the request's response_format."""


class _Retryable(Exception):
    """A transient failure; `cause` is its one-line description."""

    def __init__(self, cause: str, retry_after: float | None = None, connect: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retry_after = retry_after
        self.connect = connect


@dataclass(frozen=True)
class RetryPolicy:
    """How often and how patiently to retry. Connection refusals get at most `connect_retries`."""

    max_retries: int = 3
    base_s: float = 0.5
    max_s: float = 8.0
    connect_retries: int = 1
    deadline_s: float | None = None  # all attempts of one call, backoff included

    def delay(self, retry_number: int, retry_after: float | None = None) -> float:
        """Seconds to wait before retry `retry_number` (1-based): exponential, jittered, capped."""
        backoff = min(self.max_s, self.base_s * (2 ** (retry_number - 1)))
        backoff += random.uniform(0, self.base_s)
        if retry_after is not None:
            backoff = max(backoff, min(retry_after, self.max_s))
        return backoff


@dataclass
class Completion:
    """What one successful request produced."""

    text: str
    finish_reason: str | None
    usage: Usage
    attempts: int
    duration_s: float
    texts: list[str] = field(default_factory=list)  # every choice's text (more than one when `n` was honoured)


def _one_line(text: str, limit: int = 200) -> str:
    line = " ".join(str(text).split())
    return line if len(line) <= limit else line[: limit - 3] + "..."


def _connection_cause(exc: BaseException) -> str:
    """`connection refused`, `name not resolved`, ... from the chain of causes."""
    seen: BaseException | None = exc
    texts = []
    while seen is not None:
        if isinstance(seen, ConnectionRefusedError):
            return "connection refused"
        texts.append(str(seen))
        seen = seen.__cause__ or seen.__context__
    joined = " ".join(texts).lower()
    if "refused" in joined:
        return "connection refused"
    if "name or service not known" in joined or "nodename nor servname" in joined or "name resolution" in joined:
        return "host name not resolved"
    detail = next((t for t in reversed(texts) if t.strip()), "connection error")
    return _one_line(detail)


def _status_message(exc: openai.APIStatusError) -> str:
    body = exc.body
    if isinstance(body, dict):
        inner = body.get("error", body)
        if isinstance(inner, dict) and inner.get("message"):
            return _one_line(str(inner["message"]))
        return _one_line(json.dumps(body))
    return _one_line(exc.message or "")


def _retry_after(exc: openai.APIStatusError) -> float | None:
    value = exc.response.headers.get("retry-after") if exc.response is not None else None
    try:
        return float(value) if value is not None else None
    except ValueError:
        return None


def _classify(exc: Exception, endpoint: str, timeout: float, sent_format: bool) -> Exception:
    """Turn a client exception into _Retryable, FormatRejected, LLMUnavailable or LLMError."""
    if isinstance(exc, openai.APITimeoutError | TimeoutError):
        return _Retryable(f"endpoint {endpoint} timed out after {timeout:g} s")
    if isinstance(exc, openai.APIConnectionError):
        cause = _connection_cause(exc)
        return _Retryable(f"endpoint {endpoint} unreachable: {cause}", connect=cause == "connection refused")
    if isinstance(exc, json.JSONDecodeError | openai.APIResponseValidationError):
        return _Retryable(f"endpoint {endpoint} sent a malformed response body")
    if isinstance(exc, openai.APIStatusError):
        code, message = exc.status_code, _status_message(exc)
        if sent_format and code in (400, 422, 500, 501) and mentions_response_format(message):
            return FormatRejected(f"endpoint {endpoint} rejected response_format: HTTP {code} {message}")
        if code == 429 or code >= 500:
            return _Retryable(f"endpoint {endpoint} failed: HTTP {code} {message}", retry_after=_retry_after(exc))
        if code in _CONFIG_STATUSES:
            return LLMUnavailable(f"endpoint {endpoint} {_CONFIG_STATUSES[code]}: HTTP {code} {message}")
        return LLMError(f"endpoint {endpoint} refused the request: HTTP {code} {message}")
    return exc


def _usage_of(response: Any) -> Usage:
    usage = getattr(response, "usage", None)
    if usage is None:
        return Usage(llm_calls=1)
    return Usage(
        prompt_tokens=int(usage.prompt_tokens or 0), completion_tokens=int(usage.completion_tokens or 0), llm_calls=1
    )


async def _send(client: openai.AsyncOpenAI, request: dict[str, Any], timeout: float) -> Completion:
    started = time.monotonic()
    async with asyncio.timeout(timeout + 1.0):  # belt and braces over httpx's per-phase timeouts
        response = await client.chat.completions.create(**request, timeout=timeout)
    if not getattr(response, "choices", None):
        raise json.JSONDecodeError("completion without choices", "", 0)
    choice = response.choices[0]
    text = choice.message.content or ""
    texts = [c.message.content or "" for c in response.choices]
    return Completion(text, choice.finish_reason, _usage_of(response), 1, time.monotonic() - started, texts)


async def complete(
    client: openai.AsyncOpenAI,
    request: dict[str, Any],
    *,
    endpoint: str,
    timeout: float,
    policy: RetryPolicy,
    on_wait: Callable[[float], None] | None = None,
) -> Completion:
    """Send `request` (chat.completions.create kwargs), retrying transient failures until the deadline."""
    started = time.monotonic()
    if on_wait is None:
        return await _complete(client, request, endpoint, timeout, policy, started)
    reporter = asyncio.create_task(_report_waiting(on_wait, started))
    try:
        return await _complete(client, request, endpoint, timeout, policy, started)
    finally:
        reporter.cancel()


async def _report_waiting(on_wait: Callable[[float], None], started: float) -> None:
    while True:
        await asyncio.sleep(WAIT_REPORT_S)
        on_wait(time.monotonic() - started)


async def _complete(
    client: openai.AsyncOpenAI,
    request: dict[str, Any],
    endpoint: str,
    timeout: float,
    policy: RetryPolicy,
    started: float,
) -> Completion:
    sent_format = "response_format" in request
    deadline = started + policy.deadline_s if policy.deadline_s else None
    attempt, connect_failures = 0, 0
    while True:
        attempt += 1
        budget = timeout if deadline is None else min(timeout, deadline - time.monotonic())
        try:
            done = await _send(client, request, budget)
        except Exception as exc:
            failure = _classify(exc, endpoint, budget, sent_format)
            if not isinstance(failure, _Retryable):
                if failure is exc:
                    raise
                raise failure from None
            connect_failures += failure.connect
            suffix = f" ({attempt} attempts)" if attempt > 1 else ""
            out_of_retries = attempt - 1 >= policy.max_retries
            if out_of_retries or (failure.connect and connect_failures - 1 >= policy.connect_retries):
                raise LLMUnavailable(failure.cause + suffix) from None
            pause = policy.delay(attempt, failure.retry_after)
            if deadline is not None and time.monotonic() + pause + MIN_ATTEMPT_S > deadline:
                raise LLMUnavailable(
                    f"{failure.cause}{suffix}; gave up: no answer within the {policy.deadline_s:g} s deadline of one "
                    "model call (llm_deadline_s)"
                ) from None
            await asyncio.sleep(pause)
            continue
        done.attempts = attempt
        done.duration_s = time.monotonic() - started
        return done
