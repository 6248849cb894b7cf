"""One streamed completion: send with `stream=True`, assemble the answer from its chunks.

A chat request (`messages`) streams `chat.completion.chunk`s whose text is in each
choice's `delta`; a raw completion request (`prompt`, the legacy completions
endpoint: fill-in-the-middle) streams `text_completion` objects whose text is in
each choice's `text`. Both are assembled the same way.

Streaming is how a hung endpoint is told from a slow one. Each read of the
stream is bounded by `stall_s` (httpx's read timeout): a server that goes
silent fails the attempt in seconds, while one that keeps sending (content
chunks, or SSE keep-alive comments such as llama-cpp-python's `: ping` every
15 s while it evaluates the prompt) keeps it alive. The wait for the answer to
start (the response headers) is bounded by `start_s`; once it has started only
the hard cap (`cap_at`, a monotonic time) ends it. An answer still arriving at
the cap is cut there and kept, as `max_tokens` would have cut it (finish_reason
"length"): minutes of a slow endpoint's answer are not thrown away, and the
caller judges the cut answer as it judges any answer that hit its token limit
(the coder's complete first function is still a candidate). Only a stream
that brought no content by the cap (a prompt still being read) fails.

The answer is assembled per choice index (content and finish_reason). Usage
comes from the stream's final chunk when the endpoint sends one (OpenAI does
when asked with `stream_options.include_usage`); otherwise the completion
tokens are the content chunks counted (llama.cpp servers send one token per
chunk) and the prompt tokens an estimate from the prompt's length, flagged as
such (`Assembled.estimated`). No second request is made to count them: see
docs/configuration.md.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

import openai

from agent_core.models import Usage

CHARS_PER_TOKEN = 4  # a BPE tokenizer's rough average on English and code
MESSAGE_OVERHEAD_TOKENS = 4  # a chat template's role markers around each message


class StreamFailure(Exception):
    """An attempt that failed after its answer had started; `cause` is one line naming the endpoint.

    `interrupted`: the stream ended in good order but before the answer finished (no finish_reason),
    which is what llama-cpp-python's server does to a stream when another request arrives (its
    `interrupt_requests`, on by default); asking again streamed would be interrupted again.
    """

    def __init__(self, cause: str, retryable: bool = True, interrupted: bool = False) -> None:
        super().__init__(cause)
        self.cause = cause
        self.retryable = retryable
        self.interrupted = interrupted


@dataclass
class StreamProgress:
    """What the streams of one call have brought so far (read by the waiting reporter)."""

    tokens: int = 0
    enough: Callable[[str], bool] | None = None  # the caller's test of the first choice's text so far: True ends it


@dataclass
class Assembled:
    """A finished streamed answer."""

    texts: list[str]
    finish_reason: str | None
    usage: Usage
    estimated: bool = False  # the prompt tokens are an estimate, not the endpoint's count


@dataclass
class _Choices:
    """Content and finish reason per choice index, as the chunks bring them."""

    parts: dict[int, list[str]] = field(default_factory=dict)
    finish: dict[int, str | None] = field(default_factory=dict)
    chunks: int = 0
    usage: Any = None

    def add(self, chunk: Any) -> int:
        """Fold one chat.completion.chunk (or text_completion chunk) in; return how many content pieces it
        carried."""
        if getattr(chunk, "usage", None) is not None:
            self.usage = chunk.usage
        pieces = 0
        for choice in getattr(chunk, "choices", None) or []:
            self.parts.setdefault(choice.index, [])
            delta = getattr(choice, "delta", None)
            content = getattr(delta, "content", None) if delta is not None else getattr(choice, "text", None)
            if content:
                self.parts[choice.index].append(content)
                pieces += 1
            if choice.finish_reason is not None:
                self.finish[choice.index] = choice.finish_reason
        self.chunks += pieces
        return pieces

    def first(self) -> str:
        """The first choice's text so far."""
        return "".join(self.parts[min(self.parts)]) if self.parts else ""

    def assemble(self, messages: list[dict[str, Any]], unfinished: str | None = None) -> Assembled:
        """The answer so far; `unfinished` stands for the finish_reason of a choice that has none yet."""
        indices = sorted(self.parts)
        texts = ["".join(self.parts[i]) for i in indices]
        finish = (self.finish.get(indices[0]) or unfinished) if indices else None
        if self.usage is not None:
            usage = Usage(
                prompt_tokens=int(self.usage.prompt_tokens or 0),
                completion_tokens=int(self.usage.completion_tokens or 0),
                llm_calls=1,
            )
            return Assembled(texts, finish, usage)
        usage = Usage(prompt_tokens=estimate_prompt_tokens(messages), completion_tokens=self.chunks, llm_calls=1)
        return Assembled(texts, finish, usage, estimated=True)


def prompt_messages(request: dict[str, Any]) -> list[dict[str, Any]]:
    """The request's prompt as messages: its `messages`, or a raw completion's `prompt` (and `suffix`) as one."""
    if "prompt" not in request:
        return list(request.get("messages") or [])
    return [{"content": str(request.get("prompt") or "") + str(request.get("suffix") or "")}]


def create(client: openai.AsyncOpenAI, request: dict[str, Any], timeout: Any) -> Any:
    """The awaitable sending `request`: to the legacy completions endpoint when it carries a `prompt`, else to
    the chat completions endpoint."""
    if "prompt" in request:
        return client.completions.create(**request, timeout=timeout)
    return client.chat.completions.create(**request, timeout=timeout)


def estimate_prompt_tokens(messages: list[dict[str, Any]]) -> int:
    """A rough prompt token count (about four characters a token, plus the template's markers)."""
    total = 0
    for message in messages:
        content = message.get("content")
        text = content if isinstance(content, str) else str(content or "")
        total += math.ceil(len(text) / CHARS_PER_TOKEN) + MESSAGE_OVERHEAD_TOKENS
    return total


async def send_streamed(
    client: openai.AsyncOpenAI,
    request: dict[str, Any],
    *,
    endpoint: str,
    start_s: float,
    stall_s: float,
    cap_at: float,
    cap_s: float,
    progress: StreamProgress,
) -> Assembled:
    """Send `request` (with stream=True) and assemble its answer.

    Failures before the answer starts come out as the openai client raised them (the caller
    classifies them); failures after it are `StreamFailure`.
    """
    timeout = openai.Timeout(stall_s, connect=min(stall_s, start_s))  # httpx's per-phase timeouts
    loop = asyncio.get_running_loop()
    choices = _Choices()
    started = False
    try:
        async with asyncio.timeout(start_s) as scope:
            stream = await create(client, request, timeout)
            started = True
            scope.reschedule(loop.time() + max(0.0, cap_at - time.monotonic()))
            async with stream:
                async for chunk in stream:
                    pieces = choices.add(chunk)
                    progress.tokens += pieces
                    if pieces and progress.enough is not None and progress.enough(choices.first()):
                        # closing the stream is how the caller stops the generation (llama-cpp-python's
                        # server checks for a gone client before each token it sends)
                        return choices.assemble(prompt_messages(request), unfinished="stop")
    except TimeoutError:
        if not started:
            raise
        if choices.chunks:
            return choices.assemble(prompt_messages(request), unfinished="length")
        raise StreamFailure(
            f"endpoint {endpoint} was still streaming its answer after {cap_s:g} s (llm_answer_cap_s)", retryable=False
        ) from None
    except openai.APITimeoutError:
        if not started:
            raise
        raise StreamFailure(
            f"endpoint {endpoint} stalled: no bytes for {stall_s:g} s mid-answer (llm_stall_s)"
        ) from None
    except openai.APIConnectionError:
        if not started:
            raise
        raise StreamFailure(f"endpoint {endpoint} dropped the connection mid-answer") from None
    except openai.APIError as exc:
        if not started or isinstance(exc, openai.APIStatusError):
            raise
        message = " ".join(str(exc.message).split())[:200]
        raise StreamFailure(f"endpoint {endpoint} reported an error mid-answer: {message}") from None
    if not choices.finish:
        raise StreamFailure(
            f"endpoint {endpoint} ended the answer stream before the answer finished (a llama-cpp-python server "
            "interrupts a stream when another request arrives, unless started with --interrupt_requests false)",
            interrupted=True,
        )
    return choices.assemble(prompt_messages(request))
