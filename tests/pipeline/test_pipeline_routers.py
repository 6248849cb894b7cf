"""The graph's routers, as a table: each is a pure function of the state naming the next node."""

from __future__ import annotations

from typing import Any

import pytest

from agent_core import models  # not its Test* classes by name: pytest would try to collect them
from agent_core.pipeline.routers import (
    after_baseline,
    after_code,
    after_gate,
    after_plan,
    after_reflect,
    after_search,
    after_test,
)

GREEN = models.TestReport(passed=2)
RED = models.TestReport(
    passed=1, failed=1, failures=[models.TestFailure(nodeid="t.py::test_a", file="t.py", line=1, message="boom")]
)


@pytest.mark.parametrize(
    "state, expected",
    [
        ({"status": "error"}, "finalize"),
        ({"kind": "fix", "baseline": GREEN}, "finalize"),  # nothing failing and nothing asked
        ({"kind": "fix", "baseline": GREEN, "explicit_goal": True}, "search"),
        ({"kind": "fix", "baseline": RED}, "search"),
        ({"kind": "task", "baseline": GREEN}, "plan"),
        ({"kind": "task"}, "plan"),
    ],
)
def test_after_baseline(state: dict[str, Any], expected: str):
    assert after_baseline(state) == expected


@pytest.mark.parametrize("router, onward", [(after_search, "plan"), (after_plan, "code"), (after_code, "gate")])
def test_linear_routers_go_on_unless_the_run_ended(router: Any, onward: str):
    assert router({}) == onward
    assert router({"status": "fixed"}) == "finalize"


@pytest.mark.parametrize(
    "state, expected",
    [
        ({}, "test"),
        ({"gate": {"approved": True}}, "test"),
        ({"gate": {"approved": False}}, "finalize"),
        ({"gate": {"approved": True}, "status": "error"}, "finalize"),
    ],
)
def test_after_gate(state: dict[str, Any], expected: str):
    assert after_gate(state) == expected


@pytest.mark.parametrize(
    "state, max_iterations, fallback, expected",
    [
        ({"report": GREEN, "iteration": 1}, 3, False, "finalize"),
        ({"report": RED, "iteration": 1}, 3, False, "reflect"),
        ({"report": RED, "iteration": 3}, 3, False, "finalize"),
        ({"report": RED, "iteration": 3}, 3, True, "escalate"),
        ({"report": RED, "iteration": 3, "escalated": True}, 3, True, "reflect"),  # a second budget
        ({"report": RED, "iteration": 6, "escalated": True}, 3, True, "finalize"),
        ({"report": RED, "iteration": 1, "status": "cancelled"}, 3, False, "finalize"),
    ],
)
def test_after_test(state: dict[str, Any], max_iterations: int, fallback: bool, expected: str):
    assert after_test(state, max_iterations, fallback) == expected


@pytest.mark.parametrize(
    "state, expected",
    [
        ({"signatures": ["a"]}, "code"),
        ({"signatures": ["a", "b"], "edits_applied": True}, "code"),
        ({"signatures": ["a", "a"], "edits_applied": True}, "replan"),
        ({"signatures": ["a", "a"], "edits_applied": False}, "code"),  # the plan was not tried
        ({"signatures": ["a", "a"], "edits_applied": True, "revisions": 2}, "code"),  # out of revisions
        ({"signatures": ["a", "a"], "edits_applied": True, "status": "error"}, "finalize"),
    ],
)
def test_after_reflect(state: dict[str, Any], expected: str):
    assert after_reflect(state, max_revisions=2) == expected
