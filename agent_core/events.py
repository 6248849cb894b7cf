"""Typed events a run emits, and the hooks through which its front end answers.

The engine knows nothing of LSP or terminals: the language server turns these
events into `$/progress`, messages and diagnostics; the CLI into a progress bar
and stderr lines; the MCP server into progress notifications. All three pass
the phases through `ForwardProgress`, so what they show only goes forward.
"""

from __future__ import annotations

from dataclasses import dataclass
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


@dataclass(frozen=True)
class ProgressStep:
    """One phase as a front end shows it (ForwardProgress.step)."""

    percentage: int  # the highest percentage so far: never lower than a step before
    message: str
    rose: bool  # the percentage is higher than the step before's
    value: float  # strictly higher than the step before's: the percentage plus a fraction under 1 while it is held


class ForwardProgress:
    """A run's progress as its front end shows it: the percentage never goes down, and nothing is said twice.

    The phases estimate their percentage each on its own scale (the search counts its mutants, a model round its
    steps, a second search starts its count again), so a later phase can name a lower percentage than an earlier
    one. A front end must not show that: MCP requires each progress value to be higher than the last, and LSP
    clients expect a rising percentage. `step` holds the highest percentage seen (the message still changes),
    drops a phase that repeats the last message without a rise, and gives every step a strictly rising `value`
    for a protocol that takes fractions (MCP): the percentage plus k/(k+1) for the k-th step that holds it.
    One per run, shared by the CLI, the language server and the MCP server.
    """

    def __init__(self, shown: int = -1, message: str | None = None) -> None:
        """`shown`, `message`: what the front end already showed without a step (e.g. a progress begin at 0)."""
        self._percentage, self._message, self._held = shown, message, 0

    def step(self, event: PhaseEvent) -> ProgressStep | None:
        """How to show `event`, or None when it says nothing new."""
        rose = event.percentage > self._percentage
        if not rose and event.message == self._message:
            return None
        self._held = 0 if rose else self._held + 1
        self._percentage, self._message = max(self._percentage, event.percentage), event.message
        value = self._percentage + self._held / (self._held + 1)
        return ProgressStep(self._percentage, event.message, rose, value)


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
