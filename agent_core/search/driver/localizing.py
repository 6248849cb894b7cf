"""Localizing a failure: the suspicious functions and lines, ranked from the evidence a test run leaves.

Per-test coverage of the suite (or, on a big suite, of the failing tests' neighbourhood) is collected in one
sandboxed driver run within a share of the search's budget; the failing tracebacks and where hung tests were
stopped (evidence/) add to the spectrum, or stand alone when no coverage could be collected.
"""

from __future__ import annotations

import time
from collections import defaultdict
from dataclasses import dataclass, field
from typing import Any, Protocol

from agent_core.models import TestReport
from agent_core.sandbox.base import Sandbox
from agent_core.search.driver.sandboxed import collect_coverage
from agent_core.search.evidence.called import called_names
from agent_core.search.evidence.hangs import hang_scores, localizing_bound, unhung_duration
from agent_core.search.evidence.spectrum import Suspect, combine, coverage_scores, rank, traceback_scores
from agent_core.settings import Settings
from agent_core.testing.runner import pytest_argv
from agent_core.workspace.shadow import ShadowWorkspace


class SearchDeps(Protocol):
    """What localizing and searching need of a run: RunDeps has it, and so does the editor's background search."""

    settings: Settings
    sandbox: Sandbox
    shadow: ShadowWorkspace
    run_tests: Any  # async (sandbox, workspace, test_command, timeout_s) -> TestReport


LOCALIZE_SHARE = 0.5  # localizing may take this share of what is left of search.budget_s (it counts against it)
MIN_LOCALIZE_S = 5.0  # less left than this: no coverage run, the tracebacks alone
BIG_SUITE_TESTS = 300  # above this many tests (or BIG_SUITE_S seconds), coverage is collected on a part of it
BIG_SUITE_S = 20.0


def _big_suite(report: TestReport) -> bool:
    return report.passed + report.failed + report.errors > BIG_SUITE_TESTS or unhung_duration(report) > BIG_SUITE_S


def neighbourhood(failing: list[str]) -> list[str]:
    """The failing tests and their nearest containers (a test's class, else its file): the part of a big
    suite whose coverage tells the failing tests' lines from the lines their passing neighbours run too.

    (Per-test coverage of a whole big suite costs several times its run time; its neighbours share the
    fixtures and most of the code paths, which is what the spectrum needs to set the faulty lines apart.)
    """
    out: list[str] = []
    for nodeid in failing:
        parts = nodeid.split("[", 1)[0].split("::")
        parent = "::".join(parts[:-1]) if len(parts) > 2 else parts[0]
        out += [nodeid, parent]
    return list(dict.fromkeys(out))


MIN_PASSING_NEIGHBOURS = 5  # fewer passing tests than this around the failing ones: their files are run instead


def files_of(failing: list[str]) -> list[str]:
    """The test files of the failing tests: the wider part of a big suite, when a test's class holds too few
    passing tests to tell its lines apart (a class of expected failures, a class of one test)."""
    return list(dict.fromkeys(nodeid.split("::", 1)[0] for nodeid in failing))


def _passing(data: dict | None) -> int:
    return sum(outcome == "passed" for outcome in ((data or {}).get("outcomes") or {}).values())


@dataclass
class Localization:
    """What localizing found: the ranked suspects, the evidence used ("coverage" or "traceback"), the failing
    test ids, and the per-test coverage (rel_path -> {nodeid: lines}) with each test's outcome, when collected."""

    suspects: list[Suspect]
    evidence: str
    failing: list[str]
    files: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)  # seconds per test while localizing (under coverage)
    test_bound_s: float = 0.0  # the per-test bound while localizing: a test that took that long was cut (it hung)
    error: str = ""  # why the localizing driver collected nothing (a usage error, a crash), with its output's tail
    recorder: str = ""  # what recorded the per-test lines (coverage.py X, agentls' line tracer), or why none did

    _by_line: dict[tuple[str, int], list[str]] | None = field(default=None, init=False, repr=False)

    def covering(self, path: str, line: int) -> list[str]:
        """The tests that passed at the baseline and ran `path`:`line`: a mutant of that line must keep them
        passing, and they are a small part of a big suite (the ones most likely to notice a wrong mutant).

        From an index (path, line) -> tests built once: scanning every test's lines for each of 1,000 mutants
        took 200 s on a 1,238-test suite."""
        if self._by_line is None:
            failing = set(self.failing)
            self._by_line = defaultdict(list)
            for rel, per_test in self.files.items():
                for nodeid, lines in per_test.items():
                    if self.outcomes.get(nodeid) == "passed" and nodeid not in failing:
                        for number in dict.fromkeys(lines):
                            self._by_line[(rel, number)].append(nodeid)
        return list(self._by_line.get((path, line), ()))

    def failing_ran(self) -> dict[str, set[int]]:
        """rel_path -> the lines any failing test ran (empty without coverage)."""
        failing, out = set(self.failing), defaultdict(set)
        for rel, per_test in self.files.items():
            for nodeid, lines in per_test.items():
                if nodeid in failing:
                    out[rel].update(lines)
        return dict(out)


def _share(timeout: float, deadline: float | None) -> float:
    """A localizing run's timeout within LOCALIZE_SHARE of what is left of the search's budget (0: no time left)."""
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    return min(timeout, LOCALIZE_SHARE * left) if left >= MIN_LOCALIZE_S else 0.0


UNSURE = "unsure"  # a localizing outcome that says nothing: a test that passed before any change failed there


def _unsure_failures(outcomes: dict[str, str], report: TestReport) -> dict[str, str]:
    """`outcomes` of the localizing run, with the tests that passed before any change but failed under the line
    recorder marked UNSURE: cut by the per-test bound under coverage's slowdown, or a thread's timing upset by
    the tracer (more-itertools' concurrency tests). They are not failing tests: their lines are no evidence,
    and the search would ask every candidate to make them pass (a correct candidate then ran 15 s of them and
    was cut by its 10 s bound). Kept as they were when the baseline's failures are not all listed, or when no
    failing test of the baseline failed here too (the two runs name the tests differently)."""
    if len(report.failures) < report.failed + report.errors:
        return outcomes
    before = {f.nodeid for f in report.failures}
    failed = {n for n, o in outcomes.items() if o in ("failed", "error")}
    if not failed & before:
        return outcomes
    return {n: UNSURE if n in failed - before else o for n, o in outcomes.items()}


async def localize_failure(deps: SearchDeps, report: TestReport, deadline: float | None = None) -> Localization:
    """Rank the suspicious functions and lines of the failure in `report` (within the search's budget, when it
    ends at `deadline`: localizing counts against it)."""
    root = deps.shadow.root
    failing = [f.nodeid for f in report.failures]
    is_pytest, argv = pytest_argv(deps.settings.test_command, deps.sandbox.python)
    data = None
    per_test = localizing_bound(max(10.0, 2 * deps.settings.search.mutant_timeout_s), report)  # a looping test
    # fails, its loop covered; after a hang at the baseline, at the pace of the passing tests (search/evidence/hangs.py)
    if is_pytest and not report.timed_out and report.limit_hit is None:
        timeout = min(deps.settings.sandbox.timeout_s, max(30.0, 4 * report.duration_s + 10))
        select = neighbourhood(failing) if _big_suite(report) else None
        if select:
            timeout = deps.settings.sandbox.timeout_s  # a part of the suite: no longer bounded by its time
        if within := _share(timeout, deadline):
            data = await collect_coverage(deps.sandbox, root, argv[3:], within, per_test, select)
        wider = files_of(failing)
        if select and _passing(data) < MIN_PASSING_NEIGHBOURS and set(wider) != set(select) and (
                within := _share(timeout, deadline)):
            wider_data = await collect_coverage(deps.sandbox, root, argv[3:], within, per_test, wider)
            data = data if wider_data.get("error") else wider_data
    boosts = combine(traceback_scores(report, root), hang_scores(report, root))
    called = called_names(root, failing)
    outcomes = _unsure_failures(dict((data or {}).get("outcomes") or {}), report)
    failed_ids = [n for n, o in outcomes.items() if o in ("failed", "error")]
    if data and data.get("files") and failed_ids:
        suspects = rank(combine(coverage_scores(data["files"], outcomes), boosts), root, called=called)
        return Localization(suspects, "coverage", failed_ids, data["files"], outcomes, data.get("durations") or {},
                            per_test, recorder=data.get("recorder") or "")
    return Localization(rank(boosts, root, called=called), "traceback", failing, error=(data or {}).get("error") or "",
                        recorder=(data or {}).get("recorder") or "")
