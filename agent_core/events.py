"""Typed events a run emits, and the hooks through which its front end answers.

The engine knows nothing of LSP or terminals: the language server turns these
events into `$/progress`, messages and diagnostics; the CLI into a progress bar
and stderr lines.
"""

from __future__ import annotations

from typing import Literal, Protocol

from pydantic import BaseModel, Field

from agent_core.models import TestReport

Phase = Literal[
    "starting", "planning", "coding", "gate", "testing", "reflecting", "replanning", "verifying", "finalizing"
]


class PhaseEvent(BaseModel):
    """The run entered a phase; `percentage` is a best estimate, 0-100."""

    type: Literal["phase"] = "phase"
    run_id: str
    phase: Phase
    message: str
    percentage: int = Field(ge=0, le=100)


class TestReportEvent(BaseModel):
    """A sandboxed test run finished (published as diagnostics by the server)."""

    type: Literal["test_report"] = "test_report"
    run_id: str
    report: TestReport


class MessageEvent(BaseModel):
    """Something the user should be told once (e.g. 'sandbox is not isolated')."""

    type: Literal["message"] = "message"
    run_id: str
    level: Literal["info", "warning", "error"] = "info"
    text: str


RunEvent = PhaseEvent | TestReportEvent | MessageEvent


class SafetyViolation(BaseModel):
    """One finding of the safety gate in changed code."""

    file: str
    line: int = Field(description="1-based line.")
    rule: str = Field(description="Short rule id, e.g. 'eval', 'shell-true', 'network-import'.")
    message: str


class RunHooks(Protocol):
    """Callbacks a front end gives the engine for one run."""

    def emit(self, event: RunEvent) -> None:
        """Receive a progress event. Must not block."""

    async def approve(self, violations: list[SafetyViolation]) -> bool:
        """Ask the user whether changed code that failed the safety gate may be tested and applied."""


class NullHooks:
    """Hooks that drop events and refuse unsafe code (for scripts and tests)."""

    def __init__(self, allow_unsafe: bool = False) -> None:
        self.allow_unsafe = allow_unsafe
        self.events: list[RunEvent] = []

    def emit(self, event: RunEvent) -> None:
        self.events.append(event)

    async def approve(self, violations: list[SafetyViolation]) -> bool:
        return self.allow_unsafe
