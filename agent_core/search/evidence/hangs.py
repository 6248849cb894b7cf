"""Hanging tests as evidence, and what a hang may cost the search.

A failing test stopped by the per-test bound (testing/results.py `HUNG_MARK`
in its message) carries its stack at the bound: the innermost workspace frame
outside the tests is the line it was looping on. CPython runs a signal
handler at a loop's back edge, so that is usually the loop's header (`while lo
< hi:`), whichever line of the body never advances it. The first such test's
line is ranked first among the suspects (`HANG_BOOST` is above anything
coverage and the tracebacks can add), and the lines of the innermost loop
around it (found along the stack: the loop may be in a caller) come next
(`LOOP_BOOST`), so even a traceback-only localization (no coverage) searches
the loop's body. The other hung tests' lines get `OTHER_HANG_BOOST`.

A hang also sets what a mutant may cost: a mutant that leaves the loop as it
is hangs too, so while the failing tests hang, the per-mutant bound follows
the tests' own times (`hung_mutant_bound`) instead of the setting.
"""

from __future__ import annotations

import ast
import re
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.models import TestFailure, TestReport
from agent_core.search.evidence.spectrum import is_candidate_file
from agent_core.testing.junit import Frame, traceback_frames
from agent_core.testing.results import HUNG_MARK

HANG_BOOST = 3.0  # the first hung test's line: above coverage (at most 2) plus a traceback's boost (0.5)
OTHER_HANG_BOOST = 1.0  # where the other hung tests were stopped, when elsewhere
LOOP_BOOST = 1.0  # every other line of the innermost loop around the hanging line
MIN_MUTANT_S = 2.0  # the least a mutant may take while the failing tests hang (a fork, the tests, a loaded machine)
PASSING_FACTOR = 10.0  # a hung test, fixed, may take this many times the slowest passing test
_BOUND = re.compile(r"longer than the ([0-9.]+) s per-test bound")  # testing/pytest_plugin.py's Hung message


def hung(report: TestReport | None) -> list[TestFailure]:
    """The failures of `report` that the per-test bound stopped, in run order."""
    return [f for f in (report.failures if report is not None else []) if HUNG_MARK in f.message]


def _loops(source: str) -> list[tuple[int, int]]:
    """(first, last) line of every `while`/`for` loop of `source`."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return []
    return [(node.lineno, node.end_lineno or node.lineno) for node in ast.walk(tree)
            if isinstance(node, (ast.While, ast.For, ast.AsyncFor))]


def _innermost_loop(frames: list[Frame], workspace: Path) -> tuple[str, int, int] | None:
    """(file, first, last) of the innermost loop holding a frame of the stack, innermost frame first."""
    for frame in reversed(frames):
        if not is_candidate_file(frame.path):
            continue
        try:
            spans = _loops((workspace / frame.path).read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        around = [(a, b) for a, b in spans if a <= frame.line <= b]
        if around:
            first, last = max(around)  # the one starting last is the innermost
            return frame.path, first, last
    return None


def _stack(failure: TestFailure, workspace: Path) -> list[Frame]:
    frames = [f for f in traceback_frames(failure.traceback, workspace) if f.inside]
    if failure.source_file and failure.source_line:
        last = Frame(failure.source_file, failure.source_line, True)
        if not frames or frames[-1] != last:
            frames.append(last)
    return frames


def hang_scores(report: TestReport, workspace: Path) -> dict[tuple[str, int], float]:
    """Boosts for the lines where the hung tests of `report` were stopped and the loop around the first one."""
    out: dict[tuple[str, int], float] = {}
    for index, failure in enumerate(hung(report)):
        if not failure.source_file or not failure.source_line or not is_candidate_file(failure.source_file):
            continue
        key = (failure.source_file, failure.source_line)
        if index == 0 or not out:
            loop = _innermost_loop(_stack(failure, workspace), workspace)
            if loop is not None:
                path, first, last = loop
                for line in range(first, last + 1):
                    out[(path, line)] = max(out.get((path, line), 0.0), LOOP_BOOST)
            out[key] = HANG_BOOST
        else:
            out[key] = max(out.get(key, 0.0), OTHER_HANG_BOOST)
    return out


def hung_mutant_bound(setting_s: float, slow_tests_s: float, baseline: TestReport | None) -> float:
    """The per-mutant bound while the failing tests hang: what the tests that did not hang need (`slow_tests_s`,
    driver/mutant_bound.py `slow_tests_bound`) plus PASSING_FACTOR times the slowest passing test for each hung
    test, at least MIN_MUTANT_S and at most the bound the search would use otherwise (`setting_s`)."""
    stopped = len(hung(baseline))
    if not stopped or baseline is None:
        return setting_s
    need = slow_tests_s + PASSING_FACTOR * (baseline.slowest_pass_s or 0.0) * stopped
    return min(setting_s, max(MIN_MUTANT_S, need))


COVERAGE_SLOWDOWN = 3.0  # a test under per-test coverage runs up to this many times slower


def localizing_bound(bound_s: float, baseline: TestReport) -> float:
    """The per-test bound of the localizing run: `bound_s`, or, when tests hung at the baseline (their stack
    already says where), what the others need under coverage: PASSING_FACTOR times the slowest passing test (or
    the slowest failing one, when longer), at least MIN_MUTANT_S; four hung tests cost 40 s at 10 s each."""
    if not hung(baseline):
        return bound_s
    slowest = max(baseline.slowest_pass_s or 0.0, baseline.slowest_fail_s or 0.0)
    return min(bound_s, max(MIN_MUTANT_S, COVERAGE_SLOWDOWN * PASSING_FACTOR * slowest))


def unhung_duration(report: TestReport) -> float:
    """The run's time without what its hung tests spent up to their bound (read off the plugin's own message):
    how slow the suite is when it does not hang (four hung tests made a 0.1 s suite look like a 20 s one,
    a big suite localized in parts)."""
    spent = sum(float(m.group(1)) for f in hung(report) if (m := _BOUND.search(f.message)))
    return max(0.0, report.duration_s - spent)
