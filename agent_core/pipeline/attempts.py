"""Keeping the best attempt: an attempt that does not beat the best state so far is undone.

A small model's wrong edit is worse than no edit: the next attempt starts
from broken code and the mistakes compound. After every failing test run the
shadow's score (run-stopping problems, then errors, then failures) is
compared with the best one seen, the baseline included. A better state
becomes the new best; anything else is rewound, and what was tried goes into
the next coder prompt as a short note so it is not tried again.
"""

from __future__ import annotations

from agent_core.models import TestReport
from agent_core.pipeline.checkpoint import rewind_shadow, shadow_files
from agent_core.pipeline.state import BestAttempt, RunState, stored
from agent_core.workspace.shadow import ShadowWorkspace

TRIED_KEPT = 3  # undone attempts shown to the coder (the latest ones; a sampled round can undo several)
TRIED_CHARS = 700  # of each attempt's diff


def score(report: TestReport) -> list[int]:
    """Lower is better: the run was stopped, then errors (collection included), then failures."""
    stopped = int(report.timed_out or report.limit_hit is not None)
    return [stopped, report.errors, report.failed]


def first_state(report: TestReport) -> BestAttempt:
    """The baseline as the best state so far: no change, its own score."""
    return BestAttempt(score=score(report), files={}, report=stored(report))


def best_state(shadow: ShadowWorkspace, report: TestReport) -> BestAttempt:
    """The shadow as it is now, with `report`, as the best state so far."""
    return BestAttempt(score=score(report), files=shadow_files(shadow), report=stored(report))


def outcome(report: TestReport) -> str:
    if report.timed_out or report.limit_hit:
        return "the test run was stopped (timeout or limit)"
    first = report.failures[0] if report.failures else None
    detail = f": {first.message.splitlines()[0][:200]}" if first and first.message else ""
    return f"{report.failed} failed, {report.errors} errors{detail}"


def keep_or_rewind(shadow: ShadowWorkspace, state: RunState, report: TestReport, diff: str) -> RunState:
    """The state keys after a failing test run: a new best, or the attempt undone and noted."""
    best = state.get("best")
    if best is None or score(report) < best["score"]:
        return RunState(undone=False, best=best_state(shadow, report))
    rewind_shadow(shadow, best["files"])
    if not diff.strip():  # nothing was changed: no attempt to warn against (the coder hears why from its errors)
        return RunState(undone=True)
    return RunState(undone=True, tried=with_tried(state.get("tried"), [tried_note(diff, outcome(report))]))


def tried_note(diff: str, result: str) -> str:
    """What the coder is told about one undone attempt: its diff (cut) and what it led to."""
    return f"{diff.strip()[:TRIED_CHARS]}\nResult: {result}"


def with_tried(tried: list[str] | None, notes: list[str]) -> list[str]:
    """The tried list with `notes` added, the latest TRIED_KEPT kept."""
    return [*(tried or []), *notes][-TRIED_KEPT:]
