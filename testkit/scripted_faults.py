"""What the scripted OpenAI-compatible server (scripted_llm.py) can answer besides a plain answer:
different choices for a request with n > 1 (`Samples`) and misbehaviour on demand (`Fault`)."""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

Answer = Any  # dict | str | Callable[[dict], dict | str | Fault] | Fault | Samples


@dataclass
class Samples:
    """Different answers to one request with n > 1, one choice each."""

    answers: list[Any]


@dataclass
class Fault:
    """A misbehaviour queued in place of an answer."""

    kind: str
    code: int = 500
    times: int = 1
    seconds: float = 0.0
    then: Answer = None
    content: str | None = None

    @classmethod
    def status(cls, code: int, times: int = 1) -> Fault:
        """Answer HTTP `code` with an OpenAI-style error body, `times` requests in a row."""
        return cls(kind="status", code=code, times=max(1, times))

    @classmethod
    def hang(cls, seconds: float, then: Answer = None) -> Fault:
        """Hold the request `seconds` before answering (`then`, or a 504 error)."""
        return cls(kind="hang", seconds=seconds, then=then)

    @classmethod
    def stall(cls, seconds: float, after: int = 2, then: Answer = None) -> Fault:
        """Stream `after` pieces of `then`, go silent for `seconds`, then stream the rest."""
        return cls(kind="stall", seconds=seconds, code=after, then=then)

    @classmethod
    def drop(cls, after: int = 2, then: Answer = None) -> Fault:
        """Stream `after` pieces of `then`, then drop the connection."""
        return cls(kind="drop", code=after, then=then)

    @classmethod
    def interrupt(cls, after: int = 2, then: Answer = None) -> Fault:
        """Stream `after` pieces of `then`, then end the stream with no finish reason (a non-streamed
        request gets `then` whole)."""
        return cls(kind="interrupt", code=after, then=then)

    @classmethod
    def slow(cls, every_s: float, then: Answer) -> Fault:
        """Stream `then` one piece every `every_s` seconds."""
        return cls(kind="slow", seconds=every_s, then=then)

    @classmethod
    def pings(cls, seconds: float, every_s: float, then: Answer) -> Fault:
        """Send headers, then `: ping` comments every `every_s` for `seconds`, then stream `then`."""
        return cls(kind="pings", seconds=seconds, code=0, then=then, content=str(every_s))

    @classmethod
    def malformed(cls) -> Fault:
        """HTTP 200 whose body is not valid JSON."""
        return cls(kind="malformed")

    @classmethod
    def truncated(cls, content: str | dict | None = None) -> Fault:
        """A completion cut mid-JSON with finish_reason "length"."""
        text = json.dumps(content) if isinstance(content, dict) else content
        return cls(kind="truncated", content=text)
