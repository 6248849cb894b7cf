"""Verified quick fixes: the fix pipeline's zero-token part, run on its own after a test run fails.

A second front door beside engine.py (it sits in the engine's layer: its model round runs an Engine).

The editor calls `find_quick_fix` in the background when a test run leaves
failing tests. It does what the `search` node does at the start of a fix run
(agent_core.search's front door): localize the failure, try single-edit
mutants of the suspicious lines against the failing tests in one sandboxed
process, and verify a mutant that passes them against the whole suite. It
never calls a model and never writes the workspace: a mutant that makes every
test pass comes back as a `QuickFix` (its change set and its passing report)
for the front end to offer. Cancelling the awaiting task kills the sandbox
and removes the shadow copy, like any run.

It runs at low priority: the calling thread is reniced, and the sandboxed
processes it starts inherit that (a Docker container is the engine's child,
not ours, and keeps its normal priority).

With `search.background_model_round` on (default off), a search that finds
nothing is followed by one round of the fix pipeline (one coding attempt, no
replan, the safety gate refusing anything risky): a fix it verifies is
offered the same way. That is the only way this module reaches a model.
"""

from __future__ import annotations

import logging
import os
import threading
import time
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core import search
from agent_core.engine import Engine
from agent_core.events import NullHooks
from agent_core.models import ChangeSet, RunRequest, TestReport
from agent_core.settings import Settings
from agent_core.workspace.changeset import compute_change_set
from agent_core.workspace.shadow import ShadowWorkspace

log = logging.getLogger(__name__)
BACKGROUND_NICE = 10  # added to the calling thread's niceness (and so to its sandboxed children)


@dataclass
class QuickFix:
    """A single-edit change that makes every test pass, as found and verified in the background."""

    file: str
    line: int
    function: str  # qualified name of the function the line is in ("" for module-level code)
    change: str  # "`range(1, n)` -> `range(1, n + 1)`"
    tests_passed: int
    failing: list[str]  # node ids of the tests that failed before the change
    change_set: ChangeSet
    report: TestReport  # the whole suite, passing, with the change
    rival: str = ""  # another edit that passes too, and an input they differ on (search/driver/distinguish.py)

    @property
    def title(self) -> str:
        where = f" in {self.function}" if self.function else f" in {self.file}"
        tests = "test passes" if self.tests_passed == 1 else "tests pass"
        return f"Apply verified fix: {self.change}{where} ({self.tests_passed} {tests})"


@dataclass
class QuickFixOutcome:
    """What a background search found (`fix` None when nothing passed), with its figures."""

    fix: QuickFix | None
    stats: dict[str, Any] = field(default_factory=dict)
    duration_s: float = 0.0


def lower_priority(increment: int = BACKGROUND_NICE) -> None:
    """Renice the calling thread (Linux keeps a niceness per thread; children inherit it)."""
    try:
        tid = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, tid, min(19, os.getpriority(os.PRIO_PROCESS, tid) + increment))
    except (AttributeError, OSError) as exc:  # not Linux, or not allowed: run at normal priority
        log.info("background search keeps its priority: %s", exc)


def _function_of(suspects: list[search.Suspect], file: str, line: int) -> str:
    for suspect in suspects:
        if suspect.file == file and suspect.start_line <= line <= suspect.end_line:
            return suspect.function
    return ""


async def find_quick_fix(
    settings: Settings,
    workspace: Path,
    overlays: Mapping[str, str],
    report: TestReport,
    notice: Callable[[str], None] | None = None,
    nice: bool = True,
) -> QuickFixOutcome:
    """Search the code (`workspace` overlaid with `overlays`) whose tests failed as in `report`."""
    started = time.monotonic()
    if nice:
        lower_priority()
    outcome = await _search(settings, workspace, overlays, report, notice, started)
    if outcome.fix is None and settings.search.background_model_round:
        outcome.fix, outcome.stats["model_round"] = await model_round(settings, workspace, overlays, report)
        outcome.duration_s = round(time.monotonic() - started, 3)
    return outcome


async def _search(
    settings: Settings,
    workspace: Path,
    overlays: Mapping[str, str],
    report: TestReport,
    notice: Callable[[str], None] | None,
    started: float,
) -> QuickFixOutcome:
    from agent_core.sandbox.factory import make_sandbox
    from agent_core.testing.runner import run_tests

    sandbox = make_sandbox(settings, notice)
    with ShadowWorkspace(Path(workspace), overlays) as shadow:
        deps = search.Collaborators(settings, sandbox, shadow, run_tests)
        deadline = started + search.search_budget_s(settings, report)  # localizing counts against it
        where = await search.localize(deps, report, deadline)
        suspects, failing = where.suspects, where.failing
        stats: dict[str, Any] = {
            "evidence": where.evidence,
            "suspects": len(suspects),
            "localize_s": round(time.monotonic() - started, 3),
        }
        if not suspects or not failing:
            return QuickFixOutcome(None, stats, round(time.monotonic() - started, 3))
        found = await search.find_fix(deps, report, where, deadline=deadline, pairs=False, contain=False)
        stats.update(found.stats.as_dict(), search_s=round(time.monotonic() - started - stats["localize_s"], 3))
        winner, passed = found.fix, found.report
        if winner is None or passed is None:
            return QuickFixOutcome(None, stats, round(time.monotonic() - started, 3))
        fix = QuickFix(
            file=winner.path,
            line=winner.line,
            function=_function_of(suspects, winner.path, winner.line),
            change=search.describe_change(found.source, winner.line, winner.text, winner.description),
            tests_passed=passed.passed,
            failing=failing,
            change_set=compute_change_set(shadow),
            report=passed,
            rival=found.rival,
        )
        return QuickFixOutcome(fix, stats, round(time.monotonic() - started, 3))


async def model_round(
    settings: Settings,
    workspace: Path,
    overlays: Mapping[str, str],
    report: TestReport,
) -> tuple[QuickFix | None, str]:
    """One round of the fix pipeline (one attempt, no replan, no search); its verified fix, and its status."""
    once = settings.model_copy(
        update={
            "max_iterations": 1,
            "max_revisions": 0,
            "safety": "block",
            "search": settings.search.model_copy(update={"enabled": False}),
        }
    )
    request = RunRequest(kind="fix", workspace=Path(workspace), overlays=dict(overlays))
    result = await Engine(once).run(request, NullHooks())
    if result.status != "fixed" or result.report is None or not result.report.ok or not result.change_set.changes:
        return None, result.status
    first = result.change_set.changes[0]
    line, change = changed_line(first.original or "", first.new or "")
    if change is None or len(result.change_set.changes) > 1:
        line, change = (
            1,
            f"{len(result.change_set.unified_diff().splitlines())}-line diff of {', '.join(result.change_set.files)}",
        )
    fix = QuickFix(
        file=first.path,
        line=line,
        function=enclosing_function(first.original or "", line),
        change=change,
        tests_passed=result.report.passed,
        failing=[f.nodeid for f in report.failures],
        change_set=result.change_set,
        report=result.report,
    )
    return fix, result.status


def changed_line(original: str, new: str) -> tuple[int, str | None]:
    """(line, "`before` -> `after`") when `new` differs from `original` in exactly one line, else (1, None)."""
    old_lines, new_lines = original.split("\n"), new.split("\n")
    differing = [i for i, (a, b) in enumerate(zip(old_lines, new_lines, strict=False)) if a != b]
    if len(old_lines) != len(new_lines) or len(differing) != 1:
        return 1, None
    index = differing[0]
    return index + 1, search.describe_change(original, index + 1, new_lines[index], "") or None


def enclosing_function(source: str, line: int) -> str:
    """Qualified name of the innermost function or method around `line` ("" at module level)."""
    from agent_core.analysis.symbols import analyse

    inside = [
        s for s in analyse(source).symbols if s.kind in ("function", "method") and s.start_line <= line <= s.end_line
    ]
    return max(inside, key=lambda s: s.start_line).qualname if inside else ""
