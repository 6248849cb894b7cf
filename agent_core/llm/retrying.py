"""One completion (chat, or a raw prompt's) with retries: backoff on 429 / 5xx / timeouts / connection errors.

`complete()` sends one request through an `openai.AsyncOpenAI` client (whose
own retries are off) and retries transient failures with exponential backoff
plus jitter, all within the policy's total deadline (`llm_deadline_s`): each
attempt gets at most the time left, and no retry starts that could not get
`MIN_ATTEMPT_S` of it. While it waits, `on_wait(elapsed_s, tokens)` is called
every `WAIT_REPORT_S` seconds (with the tokens streamed so far) so a front end
can show the run is alive. Failures come out as the LLM seam's exceptions with
a one-line cause naming the endpoint, never the API key. A 4xx/5xx that
complains about `response_format` raises `FormatRejected` at once so the caller
can step down the mode ladder; one that refuses `stream` or `stream_options`
raises `StreamRefused` so the caller can ask again without it.

The retry loop itself is tenacity's (`_complete`); what is ours is which
failures are transient (`_classify`) and the messages.

A request with `stream=True` goes through streaming.py: the deadline then
bounds the retries and the wait for each answer to start, silence of
`stall_s` fails an attempt (retried like a timeout), and an answer that keeps
streaming runs until it ends or `cap_s` after the call started (then it is
cut there, as at a token limit: streaming.py).
"""

from __future__ import annotations

import asyncio
import json
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai
import tenacity

from agent_core.llm.base import LLMError, LLMUnavailable
from agent_core.llm.streaming import StreamFailure, StreamProgress, create, send_streamed
from agent_core.llm.structured import mentions_response_format
from agent_core.models import Usage

MIN_ATTEMPT_S = 1.0
WAIT_REPORT_S = 10.0
_CONFIG_STATUSES = {401: "rejected the API key", 403: "refused access", 404: "has no such model or route"}


class FormatRejected(LLMError):
    """The endpoint refused the request's response_format."""


class StreamRefused(LLMError):
    """The endpoint refused the request's `stream` or `stream_options` (named by `option`)."""

    def __init__(self, message: str, option: str) -> None:
        super().__init__(message)
        self.option = option


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
        """Seconds to wait before retry `retry_number` (1-based): exponential, jittered, capped; a Retry-After
        is honoured up to the cap."""
        backoff = tenacity.wait_exponential(multiplier=self.base_s, max=self.max_s) + tenacity.wait_random(
            0, self.base_s)
        state = tenacity.RetryCallState(tenacity.Retrying(), None, (), {})
        state.attempt_number = retry_number
        pause = backoff(state)
        return pause if retry_after is None else max(pause, min(retry_after, self.max_s))


@dataclass
class Completion:
    """What one successful request produced."""

    text: str
    finish_reason: str | None
    usage: Usage
    attempts: int
    duration_s: float
    texts: list[str] = field(default_factory=list)  # every choice's text (more than one when `n` was honoured)
    estimated: bool = False  # usage.prompt_tokens is an estimate (a stream that carried no usage)


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


def _refused_stream(message: str) -> str | None:
    """"stream_options" or "stream" when an error message names that request field."""
    lowered = message.lower()
    return "stream_options" if "stream_options" in lowered else "stream" if "stream" in lowered else None


def _classify(exc: Exception, endpoint: str, timeout: float, sent_format: bool, sent_stream: bool = False) -> Exception:
    """Turn a client exception into _Retryable, FormatRejected, StreamRefused, LLMUnavailable or LLMError."""
    if isinstance(exc, StreamFailure):
        if exc.interrupted:
            return StreamRefused(exc.cause, "stream")
        return _Retryable(exc.cause) if exc.retryable else LLMUnavailable(exc.cause)
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
        option = _refused_stream(message) if sent_stream and code in (400, 422) else None
        if option is not None:
            return StreamRefused(f"endpoint {endpoint} refused {option}: HTTP {code} {message}", option)
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


def _choice_text(choice: Any) -> str:
    """A choice's text: a chat completion's message content, or a raw completion's text."""
    message = getattr(choice, "message", None)
    return (message.content if message is not None else getattr(choice, "text", None)) or ""


@dataclass(frozen=True)
class _Limits:
    """One call's time limits: per-request `timeout`, and for streamed requests `stall_s` and the cap."""

    timeout: float
    stall_s: float
    cap_s: float
    cap_at: float


async def _send(
    client: openai.AsyncOpenAI, request: dict[str, Any], budget: float, endpoint: str, limits: _Limits,
    progress: StreamProgress,
) -> Completion:
    started = time.monotonic()
    if request.get("stream"):
        done = await send_streamed(
            client, request, endpoint=endpoint, start_s=budget, stall_s=limits.stall_s, cap_at=limits.cap_at,
            cap_s=limits.cap_s, progress=progress,
        )
        text = done.texts[0] if done.texts else ""
        return Completion(text, done.finish_reason, done.usage, 1, time.monotonic() - started, done.texts,
                          done.estimated)
    timeout = budget
    async with asyncio.timeout(timeout + 1.0):  # belt and braces over httpx's per-phase timeouts
        response = await create(client, request, timeout)
    if not getattr(response, "choices", None):
        raise json.JSONDecodeError("completion without choices", "", 0)
    choice = response.choices[0]
    texts = [_choice_text(c) for c in response.choices]
    text = texts[0]
    return Completion(text, choice.finish_reason, _usage_of(response), 1, time.monotonic() - started, texts)


async def complete(
    client: openai.AsyncOpenAI,
    request: dict[str, Any],
    *,
    endpoint: str,
    timeout: float,
    policy: RetryPolicy,
    on_wait: Callable[[float, int], None] | None = None,
    stall_s: float | None = None,
    cap_s: float | None = None,
    enough: Callable[[str], bool] | None = None,
) -> Completion:
    """Send `request` (chat.completions.create kwargs, or completions.create kwargs when it carries a
    `prompt`), retrying transient failures until the deadline.

    `timeout` bounds one non-streamed request, or the start of a streamed one; `stall_s` (default
    `timeout`) the silence within a streamed answer, `cap_s` (default none) its whole duration.
    `enough`: a streamed answer ends (finish_reason "stop") as soon as it returns True for the text so far.
    """
    started = time.monotonic()
    cap = cap_s if cap_s is not None else math.inf
    limits = _Limits(timeout, stall_s if stall_s is not None else timeout, cap, started + cap)
    progress = StreamProgress(enough=enough)
    if on_wait is None:
        return await _complete(client, request, endpoint, limits, policy, started, progress)
    reporter = asyncio.create_task(_report_waiting(on_wait, started, progress))
    try:
        return await _complete(client, request, endpoint, limits, policy, started, progress)
    finally:
        reporter.cancel()


async def _report_waiting(on_wait: Callable[[float, int], None], started: float, progress: StreamProgress) -> None:
    while True:
        await asyncio.sleep(WAIT_REPORT_S)
        on_wait(time.monotonic() - started, progress.tokens)


async def _complete(
    client: openai.AsyncOpenAI, request: dict[str, Any], endpoint: str, limits: _Limits, policy: RetryPolicy,
    started: float, progress: StreamProgress,
) -> Completion:
    """One call under tenacity: `_Retryable` failures are retried with `policy.delay`'s pauses until the
    retries, the connection retries or the deadline run out (then LLMUnavailable says which); any other
    failure ends the call at once."""
    sent_format, sent_stream = "response_format" in request, bool(request.get("stream"))
    deadline = started + policy.deadline_s if policy.deadline_s else None
    connect_failures = 0

    async def attempt() -> Completion:
        nonlocal connect_failures
        progress.tokens = 0  # the tokens of this attempt's answer
        budget = limits.timeout if deadline is None else min(limits.timeout, deadline - time.monotonic())
        try:
            return await _send(client, request, budget, endpoint, limits, progress)
        except Exception as exc:
            failure = _classify(exc, endpoint, min(budget, limits.stall_s) if sent_stream else budget, sent_format,
                                sent_stream)
            if failure is exc:
                raise
            connect_failures += isinstance(failure, _Retryable) and failure.connect
            raise failure from None

    def out_of_retries(state: tenacity.RetryCallState) -> bool:
        failure = state.outcome.exception() if state.outcome else None
        connect = isinstance(failure, _Retryable) and failure.connect
        connect_spent = connect and connect_failures - 1 >= policy.connect_retries
        return state.attempt_number - 1 >= policy.max_retries or connect_spent

    def past_deadline(state: tenacity.RetryCallState) -> bool:  # no retry that could not get MIN_ATTEMPT_S
        return deadline is not None and time.monotonic() + (state.upcoming_sleep or 0) + MIN_ATTEMPT_S > deadline

    def give_up(state: tenacity.RetryCallState) -> Completion:
        failure = state.outcome.exception() if state.outcome else None
        assert isinstance(failure, _Retryable)
        why = failure.cause + (f" ({state.attempt_number} attempts)" if state.attempt_number > 1 else "")
        if not out_of_retries(state):
            why += (f"; gave up: no answer within the {policy.deadline_s:g} s deadline of one model call "
                    "(llm_deadline_s)")
        raise LLMUnavailable(why) from None

    def pause(state: tenacity.RetryCallState) -> float:
        failure = state.outcome.exception() if state.outcome else None
        return policy.delay(state.attempt_number, failure.retry_after if isinstance(failure, _Retryable) else None)

    retrying = tenacity.AsyncRetrying(
        retry=tenacity.retry_if_exception_type(_Retryable), wait=pause,
        stop=lambda state: out_of_retries(state) or past_deadline(state), retry_error_callback=give_up,
        sleep=asyncio.sleep,
    )
    done: Completion = await retrying(attempt)
    done.attempts = retrying.statistics.get("attempt_number", 1)
    done.duration_s = time.monotonic() - started
    return done
