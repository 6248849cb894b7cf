"""Hangs as evidence and as a cost: the hanging line ranks first, its loop next; a hang's time is not the suite's;
the per-test bound follows the passing tests (the plugin's Pace); the covering index answers as the scan did."""

from __future__ import annotations

import random
from pathlib import Path

import pytest

from agent_core.models import TestFailure as Failure
from agent_core.models import TestReport as Report
from agent_core.search.driver.localizing import Localization, _share
from agent_core.search.evidence.hangs import (
    HANG_BOOST,
    LOOP_BOOST,
    MIN_MUTANT_S,
    hang_scores,
    hung_mutant_bound,
    localizing_bound,
    unhung_duration,
)
from agent_core.search.evidence.spectrum import combine, coverage_scores, rank, traceback_scores
from agent_core.testing.pytest_plugin import HUNG_FLOOR_S, PACE_FLOOR_S, Pace

SEARCH = (
    "def position(items, target):\n"    # 1
    "    lo, hi = 0, len(items)\n"      # 2
    "    while lo < hi:\n"              # 3
    "        mid = (lo + hi) // 2\n"    # 4
    "        if items[mid] < target:\n"  # 5
    "            lo = mid\n"            # 6
    "        else:\n"                   # 7
    "            hi = mid\n"            # 8
    "    return lo\n"                   # 9
    "\n\n"
    "def contains(items, target):\n"    # 12
    "    at = position(items, target)\n"  # 13
    "    return at < len(items) and items[at] == target\n"  # 14
)
FULL = "Timeout: the test ran longer than the 10 s per-test bound and was stopped here"
SHORT = ("Timeout: the test ran longer than the 2 s per-test bound (shortened: an earlier test hung) "
         "and was stopped here")


def _hung(nodeid: str, line: int, message: str = FULL, traceback: str = "") -> Failure:
    return Failure(nodeid=nodeid, file="test_b.py", line=5, message=message, traceback=traceback,
                       source_file="b.py", source_line=line)


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    (tmp_path / "b.py").write_text(SEARCH)
    return tmp_path


def test_the_first_hanging_line_ranks_first_and_its_loop_next(workspace: Path):
    report = Report(passed=2, failed=2, failures=[
        _hung("test_b.py::test_between", 3), _hung("test_b.py::test_after", 3, SHORT)])
    boosts = hang_scores(report, workspace)
    assert boosts[("b.py", 3)] == HANG_BOOST
    assert {line for (_, line), v in boosts.items() if v == LOOP_BOOST} == {4, 5, 6, 7, 8}, "the loop's body"
    # coverage alone puts `lo = mid` (run by the failing tests only) first; the hang puts its line before it
    files = {"b.py": {"t::pass": [2, 3, 4, 5, 8, 9], "t::a": [2, 3, 4, 5, 6, 8], "t::b": [2, 3, 4, 5, 6]}}
    outcomes = {"t::pass": "passed", "t::a": "failed", "t::b": "failed"}
    assert rank(coverage_scores(files, outcomes), workspace)[0].lines[0] == 6
    ranked = rank(combine(coverage_scores(files, outcomes), traceback_scores(report, workspace), boosts), workspace)
    assert (ranked[0].function, ranked[0].lines[:2]) == ("position", [3, 6])


def test_a_hang_stopped_in_a_callee_boosts_the_callers_loop(workspace: Path):
    (workspace / "c.py").write_text("from b import contains\n\n\ndef scan(xs):\n    i = 0\n"
                                    "    while i < len(xs):\n        contains(xs, xs[i])\n    return i\n")
    stack = f'{workspace}/c.py:7: in scan\n    contains(xs, xs[i])\n{workspace}/b.py:14: in contains\n'
    boosts = hang_scores(Report(failed=1, failures=[_hung("test_c.py::t", 14, traceback=stack)]), workspace)
    assert boosts[("b.py", 14)] == HANG_BOOST, "where it was stopped"
    assert {k for k, v in boosts.items() if v == LOOP_BOOST} == {("c.py", 6), ("c.py", 7)}, "the loop it runs in"


def test_failures_that_did_not_hang_add_nothing(workspace: Path):
    report = Report(failed=1, failures=[_hung("t", 6, message="assert 3 == 2")])
    assert hang_scores(report, workspace) == {}
    assert unhung_duration(report.model_copy(update={"duration_s": 4.0})) == 4.0


def test_a_hangs_time_is_not_the_suites():
    report = Report(passed=3, failed=4, duration_s=17.5, slowest_pass_s=0.01, failures=[
        _hung("a", 3), _hung("b", 3, SHORT), _hung("c", 3, SHORT), _hung("d", 3, SHORT)])
    assert unhung_duration(report) == pytest.approx(1.5)
    assert localizing_bound(10.0, report) == MIN_MUTANT_S, "the hang is known: the others at the tests' pace"
    assert localizing_bound(10.0, report.model_copy(update={"failures": []})) == 10.0
    assert hung_mutant_bound(5.0, 1.0, report) == MIN_MUTANT_S
    assert hung_mutant_bound(5.0, 1.0, report.model_copy(update={"slowest_pass_s": 0.2})) == 5.0, "capped"
    assert hung_mutant_bound(5.0, 1.0, None) == 5.0


@pytest.mark.parametrize("events, expected", [
    ([], 60.0),  # nothing known yet: the configured bound
    ([("pass", 0.01)], PACE_FLOOR_S),  # a fast test passed: 10 s, not a minute
    ([("pass", 2.5)], 25.0),  # 10x the slowest passing phase
    ([("pass", 9.0)], 60.0),  # never above the configured bound
    ([("hang", 0)], HUNG_FLOOR_S),  # the first hang showed where it loops: the next ones at 2 s
    ([("pass", 0.01), ("hang", 0)], HUNG_FLOOR_S),
    ([("pass", 0.5), ("hang", 0)], 5.0),
])
def test_the_per_test_bound_follows_the_passing_tests(events: list, expected: float):
    pace = Pace(60.0)
    for kind, seconds in events:
        if kind == "pass":
            pace.passed(seconds)
        else:
            pace.hung = True
    assert pace.now() == expected
    assert pace.now("setup") == pace.now("teardown") == 60.0, "a slow fixture keeps the cap"
    assert Pace(60.0, paced=False).now() == 60.0, "the user's own bound is the bound"


@pytest.mark.parametrize("path, looping", [
    ("/w/pkg/bsearch.py", True),  # the project's code: a loop there is the bug
    ("/w/src/pkg/core.py", True),
    ("/w/tests/test_slow.py", False),  # the running test's own file (a sleep in it)
    ("/w/tests/helpers.py", False),  # test code
    ("/w/test_other.py", False),
    ("/w/conftest.py", False),
    ("/w/.venv/lib/python3.11/site-packages/lib.py", False),  # a library: waiting on something
    ("/usr/lib/python3.11/subprocess.py", False),
    ("", False),
])
def test_a_paced_bound_cuts_only_a_test_in_the_projects_own_code(path: str, looping: bool):
    from types import SimpleNamespace

    from agent_core.testing.pytest_plugin import Controls

    controls = Controls(60.0, [], None, paced=True, root="/w")
    controls.test_file = "/w/tests/test_slow.py"
    assert controls.in_project_code(SimpleNamespace(f_code=SimpleNamespace(co_filename=path))) is looping


def test_the_covering_index_answers_as_the_scan_did():
    rng = random.Random(7)
    tests = [f"t.py::test_{i}" for i in range(60)]
    outcomes = {t: rng.choice(["passed", "passed", "failed", "skipped"]) for t in tests}
    files = {f"m{k}.py": {t: sorted(rng.sample(range(1, 40), 12)) for t in tests} for k in range(3)}
    where = Localization([], "coverage", [t for t in tests if outcomes[t] == "failed"], files, outcomes)
    for path in [*files, "other.py"]:
        for line in range(0, 42):
            scan = [t for t, lines in (files.get(path) or {}).items()
                    if outcomes.get(t) == "passed" and line in lines and t not in where.failing]
            assert where.covering(path, line) == scan


def test_localizing_takes_its_share_of_the_budget_left():
    import time

    now = time.monotonic()
    assert _share(60.0, None) == 60.0, "no budget (the search is off): the run's own bound"
    assert 40.0 < _share(300.0, now + 100) <= 50.0, "half of what is left"
    assert _share(10.0, now + 100) == 10.0
    assert _share(60.0, now + 1) == 0.0, "nothing worth a run is left: the tracebacks alone"
