"""The streamed (SSE) replies of the scripted OpenAI-compatible server (scripted_llm.py).

A request with `"stream": true` is answered the way OpenAI's endpoint and
llama-cpp-python's server do: `text/event-stream`, one `data: {...}` line per
`chat.completion.chunk` (a role chunk, content pieces of about four characters,
which the server counts as one token each, a finish chunk per choice), a usage
chunk when `stream_options.include_usage` asks for it and the server sends
usage, then `data: [DONE]`. Comments (`: ping`) are keep-alives. A raw
completion request (it has a `prompt`: `/v1/completions`) streams
`text_completion` objects instead, the text in each choice's `text` (the first
one empty, where a chat stream names the role).

A reply is a plan: a list of `Event(delay_s, data)` written in order, each
after its delay; `data` None drops the connection there (no end of the chunked
body). Faults shape the plan: a stall mid-stream, a slow but steady stream,
keep-alive pings before the first token, a dropped connection.
"""

from __future__ import annotations

import json
import time
import uuid
from dataclasses import dataclass
from typing import Any

PIECE_CHARS = 4  # one streamed piece per ~4 characters, the server's idea of a token


@dataclass
class Event:
    """Bytes written after `delay_s`; `data` None drops the connection."""

    delay_s: float
    data: bytes | None


def pieces(text: str) -> list[str]:
    """`text` cut into the pieces the server streams (its tokens)."""
    return [text[i : i + PIECE_CHARS] for i in range(0, len(text), PIECE_CHARS)] or [""]


def _chunk(cid: str, model: str, choices: list[dict[str, Any]], usage: dict[str, Any] | None = None) -> bytes:
    raw = cid.startswith("cmpl-")
    if raw:  # a text_completion chunk: the text in `text`, no delta
        choices = [{"index": c["index"], "text": c["delta"].get("content", ""), "finish_reason": c["finish_reason"],
                    "logprobs": None} for c in choices]
    body = {"id": cid, "object": "text_completion" if raw else "chat.completion.chunk", "created": int(time.time()),
            "model": model, "choices": choices}
    if usage is not None:
        body["usage"] = usage
    return b"data: " + json.dumps(body).encode() + b"\n\n"


def answer_events(
    body: dict[str, Any], contents: list[str], prompt_tokens: int, *, finish_reason: str = "stop",
    send_usage: bool = True, every_s: float = 0.0,
) -> list[Event]:
    """The plan streaming `contents` (one choice each), a piece every `every_s` seconds."""
    raw = "prompt" in body
    cid, model = f"{'cmpl' if raw else 'chatcmpl'}-{uuid.uuid4().hex[:24]}", body.get("model") or "scripted"
    events = [Event(0.0, _chunk(cid, model, [
        {"index": i, "delta": {"role": "assistant", "content": ""}, "finish_reason": None, "logprobs": None}
        for i in range(len(contents))
    ]))]
    completion_tokens = 0
    for i, text in enumerate(contents):
        for piece in pieces(text) if text else []:
            choice = {"index": i, "delta": {"content": piece}, "finish_reason": None, "logprobs": None}
            events.append(Event(every_s, _chunk(cid, model, [choice])))
            completion_tokens += 1
    for i in range(len(contents)):
        choice = {"index": i, "delta": {}, "finish_reason": finish_reason, "logprobs": None}
        events.append(Event(0.0, _chunk(cid, model, [choice])))
    options = body.get("stream_options") or {}
    if send_usage and isinstance(options, dict) and options.get("include_usage"):
        usage = {"prompt_tokens": prompt_tokens, "completion_tokens": completion_tokens,
                 "total_tokens": prompt_tokens + completion_tokens}
        events.append(Event(0.0, _chunk(cid, model, [], usage)))
    events.append(Event(0.0, b"data: [DONE]\n\n"))
    return events


def stalled(events: list[Event], after: int, seconds: float) -> list[Event]:
    """`events` with a silence of `seconds` after the first `after` content events."""
    cut = min(len(events), 1 + after)
    return [*events[:cut], Event(seconds, b""), *events[cut:]]


def dropped(events: list[Event], after: int) -> list[Event]:
    """`events` cut after the first `after` content events by a dropped connection."""
    return [*events[: min(len(events), 1 + after)], Event(0.0, None)]


def pinged(events: list[Event], seconds: float, every_s: float) -> list[Event]:
    """`events` after `seconds` of keep-alive comments every `every_s` (a server evaluating the prompt)."""
    count = max(1, int(seconds / every_s))
    return [*(Event(every_s, b": ping\n\n") for _ in range(count)), *events]


def interrupted(events: list[Event], after: int) -> list[Event]:
    """`events` ended in good order (`[DONE]`) after `after` content events, with no finish reason
    (llama-cpp-python's server does this when another request arrives)."""
    return [*events[: min(len(events), 1 + after)], Event(0.0, b"data: [DONE]\n\n")]


def malformed_events() -> list[Event]:
    """A stream whose chunk is not valid JSON."""
    return [Event(0.0, b'data: {"id": "chatcmpl-broken", "choices": [{"index": 0, "del\n\n'),
            Event(0.0, b"data: [DONE]\n\n")]
