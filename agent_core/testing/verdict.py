"""What "verified" means for a fix: the one rule, applied to every test run that can decide a verdict.

A candidate's run passes only when, against the baseline (the run before any
change):

- every test that failed at the baseline is collected again and *passes*: a
  skip, an xfail, an xpass, an error, or a test that is no longer collected
  is not a pass (a module that failed to collect at the baseline must
  collect and have a passing test). One exception: a test that failed at
  the baseline as the unexpected pass of its own strict xfail mark
  (`[XPASS(strict)]`: the code does what its authors wrote down it does not
  do yet) is fixed when it fails as that mark expects, on its own assertion
  (`xfailed` with an `AssertionError`, `pytest.fail` or a `pytest.raises`
  that saw nothing raised; a crash of the code under test is not that, nor
  is a `pytest.xfail()` call, which the test plugin reports as skipped);
- no test that passed now fails (any failure keeps the report from `ok`);
- the number of passing tests is not lower than the baseline's.

`judge` turns each shortfall into a failure of the report, with a message
that says what happened ("skipped now: a skip is not a pass"), so that every
consumer of `TestReport.ok` (the test node, the router, the search, the
sampler, finalize) sees the same verdict, and the coder and the reflector
hear why. It needs per-test outcomes (our plugin's, or the JUnit XML's of a
pytest that could not load it); a candidate run without them, while the
baseline had failing tests, is not verified either. A run limited to
some tests (`selected`) is judged on those tests only, without the count.
"""

from __future__ import annotations

from collections.abc import Sequence

from agent_core.models import TestFailure, TestReport
from agent_core.testing.linters import is_tool_nodeid
from agent_core.testing.results import SESSION_NODEID

_WHY = {
    None: "not collected any more: a test that vanished is not a pass",
    "skipped": "skipped now: a skip is not a pass",
    "xfailed": "marked as an expected failure now: an xfail is not a pass",
    "xpassed": "passes only as an unexpected pass of an xfail mark: not a pass",
}
NO_OUTCOMES = ("the run reported no per-test results (the test plugin did not load or its report never "
               "reached agentls), so the baseline's failing tests cannot be shown to pass: not verified")


CHANGED_DURING_RUN = ("the code under test changed a test file or the test configuration while the tests ran "
                      "(undone): this run's results are not trusted")


def distrust(report: TestReport, why: str) -> TestReport:
    """`report` failed as a whole, for `why` (the run cannot verify anything)."""
    _fail(report, SESSION_NODEID, why)
    return report


def baseline_failing(baseline: TestReport) -> list[str]:
    """Node ids (tests, or a module that failed to collect) that failed at the baseline."""
    ids = [f.nodeid for f in baseline.failures if f.nodeid != SESSION_NODEID and not is_tool_nodeid(f.nodeid)]
    return list(dict.fromkeys(ids))


XPASS_STRICT = "[XPASS(strict)]"  # pytest's failure of a test its strict xfail mark expected to fail


def _shortfall(nodeid: str, report: TestReport, failing_now: set[str], xpassed: bool = False) -> str | None:
    """Why the baseline's failing `nodeid` (`xpassed`: as the unexpected pass of its strict xfail mark) does
    not count as passing in `report`, or None."""
    if nodeid in failing_now:
        return None  # reported as failing already
    if "::" not in nodeid:  # a module that failed to collect: it must collect, with a passing test
        if any(k.startswith(nodeid + "::") and v == "passed" for k, v in report.outcomes.items()):
            return None
        return "failed to collect at the baseline and has no passing test now: not a pass"
    outcome = report.outcomes.get(nodeid)
    if outcome == "passed" or outcome in ("failed", "error"):
        return None
    if xpassed and outcome == "xfailed":
        if nodeid in report.xfailed_on_assertion:
            return None
        return ("failing as its strict xfail mark expects, but on a crash of the code under test, not on the "
                "test's own assertion: not a fix")
    return _WHY.get(outcome, f"ended as {outcome!r}: not a pass")


def _fail(report: TestReport, nodeid: str, message: str, line: int = 1) -> None:
    file = nodeid.split("::", 1)[0] if nodeid != SESSION_NODEID else ""
    report.failed += 1
    report.failures.append(TestFailure(nodeid=nodeid, file=file, line=line, message=message, kind="failure"))


def judge(report: TestReport, baseline: TestReport | None, selected: Sequence[str] = ()) -> TestReport:
    """`report` with a failure added for each way it falls short of a verified fix (see the module docstring)."""
    if baseline is None or report.timed_out or report.limit_hit:
        return report  # not ok already
    failing = baseline_failing(baseline)
    if selected:
        failing = [n for n in failing if n in selected]
    if failing and not report.outcomes:
        _fail(report, SESSION_NODEID, NO_OUTCOMES)
        return report
    failing_now = {f.nodeid for f in report.failures}
    lines = {f.nodeid: f.line for f in baseline.failures}
    xpassed = {f.nodeid for f in baseline.failures if f.message.startswith(XPASS_STRICT)}
    for nodeid in failing:
        why = _shortfall(nodeid, report, failing_now, nodeid in xpassed)
        if why:
            _fail(report, nodeid, f"failed at the baseline and is {why}" if "::" in nodeid else why,
                  lines.get(nodeid, 1))
    if not selected and report.passed < baseline.passed:
        _fail(report, SESSION_NODEID, f"{report.passed} tests pass, fewer than the {baseline.passed} that passed "
                                      "at the baseline: a test that stops passing is not a fix")
    return report
