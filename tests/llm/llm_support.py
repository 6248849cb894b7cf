"""Shared pieces of the LLM layer tests: a schema, a good answer, a recording observer."""

from __future__ import annotations

import socket

from pydantic import BaseModel, Field

from agent_core.llm.base import LLMCall

API_KEY = "sk-test-SECRET-9f8e7d6c5b4a"


class Verdict(BaseModel):
    """A small answer schema with a constraint a model can violate."""

    summary: str = Field(description="One sentence.")
    priority: int = Field(ge=1, le=5, description="1 (low) to 5 (high).")


GOOD = {"summary": "the off-by-one is in range()", "priority": 2}


class Recorder:
    """An LLMObserver that keeps every call."""

    def __init__(self) -> None:
        self.calls: list[LLMCall] = []

    def on_llm_call(self, call: LLMCall) -> None:
        self.calls.append(call)


def closed_port() -> int:
    """A local port with nothing listening on it."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]
