"""Routing of the verification additions: pure tables over the graph state (pipeline/routers.py)."""

from __future__ import annotations

import pytest

from agent_core.models import TestFailure, TestReport
from agent_core.pipeline.routers import after_baseline, after_test, after_verify

PASSING = TestReport(passed=2, exit_code=0)
FAILING = TestReport(passed=1, failed=1, exit_code=1, failures=[
    TestFailure(nodeid="tests/test_calc.py::test_add", file="tests/test_calc.py", line=4, message="assert")],
)
RUFF_ONLY = TestReport(passed=2, failed=1, exit_code=0, failures=[
    TestFailure(nodeid="ruff::calc.py::F401", file="calc.py", line=1, message="[ruff] F401 unused")],
)


@pytest.mark.parametrize("state, options, route", [
    ({"kind": "task", "baseline": PASSING}, {"goal_tests": True}, "specify"),
    ({"kind": "task", "baseline": PASSING}, {"goal_tests": False}, "plan"),
    ({"kind": "task", "baseline": FAILING}, {"goal_tests": True}, "plan"),  # failing tests specify it already
    ({"kind": "fix", "explicit_goal": True, "baseline": PASSING}, {"goal_tests": True}, "specify"),
    ({"kind": "fix", "baseline": PASSING}, {"goal_tests": True}, "finalize"),  # nothing asked, nothing fails
    ({"kind": "fix", "explicit_goal": True, "baseline": RUFF_ONLY}, {"goal_tests": True, "tool_checked": True}, "plan"),
    ({"kind": "fix", "explicit_goal": True, "baseline": FAILING}, {"goal_tests": True, "tool_checked": True}, "search"),
])
def test_after_baseline(state, options, route):
    assert after_baseline(state, **options) == route


@pytest.mark.parametrize("state, verifier, route", [
    ({"report": PASSING, "iteration": 1}, False, "finalize"),
    ({"report": PASSING, "iteration": 1}, True, "verify"),
    ({"report": FAILING, "iteration": 1}, True, "reflect"),  # a failing test never reaches the verifier
    ({"report": FAILING, "iteration": 2, "verdict": {"next": "code"}}, True, "verify"),  # its round: undone there
    ({"report": FAILING, "iteration": 1, "status": "error"}, True, "finalize"),
])
def test_after_test(state, verifier, route):
    assert after_test(state, max_iterations=3, verifier=verifier) == route


@pytest.mark.parametrize("verdict, route", [({"next": "code"}, "code"), ({"next": "finalize"}, "finalize"),
                                            (None, "finalize")])
def test_after_verify(verdict, route):
    assert after_verify({"verdict": verdict}) == route
