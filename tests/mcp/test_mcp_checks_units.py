"""Pure tables for what verify_patch decides: the diff's strip depth and paths, refusals, the verdict."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core import models
from agent_core.checks.diffs import _numstat_paths, strip_depth
from agent_core.checks.verify_patch import OutcomeChange, outcome_changes, refusal
from agent_core.testing.verdict import judge


@pytest.mark.parametrize(("diff", "depth"), [
    ("--- a/x.py\n+++ b/x.py\n", 1),
    ("--- /dev/null\n+++ b/new.py\n", 1),
    ("--- x.py\n+++ x.py\n", 0),
    ("--- a/x.py\n+++ x.py\n", 0),
    ("diff --git a/x.py b/y.py\nrename from x.py\nrename to y.py\n", 1),
])
def test_strip_depth(diff: str, depth: int):
    assert strip_depth(diff) == depth


def test_numstat_paths_reads_plain_entries_and_renames():
    out = b"1\t1\tcalc.py\x000\t0\t\x00old name.py\x00new name.py\x00-\t-\timg.png\x00"
    assert _numstat_paths(out) == ["calc.py", "old name.py", "new name.py", "img.png"]


@pytest.mark.parametrize(("path", "says"), [
    ("calc.py", None),
    ("pkg/core.py", None),
    ("tests/test_calc.py", "is a test file"),
    ("test_calc.py", "is a test file"),
    ("pkg/conftest.py", "configures the test run"),
    ("pyproject.toml", "configures the test run"),
    ("site.pth", "configures the test run"),
    ("../evil.py", "is outside the project"),
    ("/etc/passwd", "is outside the project"),
    ("node_modules/x.js", "not part of the project's copy"),
    ("pkg/__pycache__/core.cpython-311.pyc", "not part of the project's copy"),
])
def test_refusal(tmp_path: Path, path: str, says: str | None):
    why = refusal(path, tmp_path)
    assert (why is None) if says is None else (says in why), why


def _report(outcomes: dict[str, str]) -> models.TestReport:
    bad = {n: o for n, o in outcomes.items() if o in ("failed", "error")}
    return models.TestReport(
        passed=sum(o == "passed" for o in outcomes.values()), failed=sum(o == "failed" for o in outcomes.values()),
        errors=sum(o == "error" for o in outcomes.values()), skipped=sum(o == "skipped" for o in outcomes.values()),
        exit_code=0 if not bad else 1, outcomes=outcomes,
        failures=[models.TestFailure(nodeid=n, file="t.py", line=1, message="",
                                     kind="failure" if o == "failed" else "error") for n, o in bad.items()],
    )


@pytest.mark.parametrize(("before", "after", "verified"), [
    ({"t::a": "failed", "t::b": "passed"}, {"t::a": "passed", "t::b": "passed"}, True),
    ({"t::a": "passed", "t::b": "passed"}, {"t::a": "passed", "t::b": "passed"}, True),
    ({"t::a": "failed", "t::b": "passed"}, {"t::a": "passed", "t::b": "failed"}, False),
    ({"t::a": "failed", "t::b": "passed"}, {"t::a": "skipped", "t::b": "passed"}, False),
    ({"t::a": "failed", "t::b": "passed"}, {"t::b": "passed"}, False),
    ({"t::a": "passed", "t::b": "passed"}, {"t::a": "passed", "t::b": "skipped"}, False),
    ({"t::a": "passed", "t::b": "passed"}, {"t::a": "passed"}, False),
])
def test_verdict_against_the_baseline(before: dict, after: dict, verified: bool):
    """What verify_patch asks of the patched run (the fix runs' rule, testing/verdict.py)."""
    assert judge(_report(after), _report(before)).ok is verified


def test_outcome_changes_name_every_difference_with_absent_sides():
    changes = outcome_changes(_report({"t::a": "failed", "t::gone": "passed"}), _report({"t::a": "passed",
                                                                                         "t::new": "error"}))
    assert changes == [OutcomeChange("t::a", "failed", "passed"), OutcomeChange("t::gone", "passed", "absent"),
                       OutcomeChange("t::new", "absent", "error")]
