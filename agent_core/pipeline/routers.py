"""Routers: pure functions of the state that name the next node."""

from __future__ import annotations

from typing import Literal

from agent_core.models import TestReport
from agent_core.pipeline.state import RunState
from agent_core.testing.linters import is_tool_nodeid


def _ended(state: RunState) -> bool:
    return bool(state.get("status"))


def after_baseline(
    state: RunState, goal_tests: bool = False, tool_checked: bool = False,
) -> Literal["search", "specify", "plan", "finalize"]:
    """`goal_tests`: the tester may write tests of the goal; `tool_checked`: another tool's findings judge too."""
    if _ended(state):
        return "finalize"
    report = state.get("baseline")
    passing = bool(report and (report.ok or no_tests_yet(report)))
    nothing_asked = state.get("kind") == "fix" and not state.get("explicit_goal")
    if nothing_asked and passing:
        return "finalize"  # "fix the failing tests" with none failing: nothing to do
    if passing and goal_tests and not tool_checked:
        return "specify"  # a goal and no failing test: the tester writes the tests that will judge the change
    failing_tests = [f for f in (report.failures if report else []) if not is_tool_nodeid(f.nodeid)]
    if tool_checked and not failing_tests:
        return "plan"  # only the tool's findings fail: the mutant search works on failing tests
    return "search" if state.get("kind") == "fix" else "plan"


def after_specify(state: RunState) -> Literal["plan", "finalize"]:
    return "finalize" if _ended(state) else "plan"


def no_tests_yet(report: TestReport) -> bool:
    """pytest collected no test at all (exit 5): a new project, where only the goal's tests can judge a task."""
    return report.exit_code == 5 and not report.passed and not report.failures


def after_search(state: RunState) -> Literal["plan", "finalize"]:
    return "finalize" if _ended(state) else "plan"


def after_plan(state: RunState) -> Literal["code", "finalize"]:
    return "finalize" if _ended(state) else "code"


def after_code(state: RunState) -> Literal["gate", "finalize"]:
    return "finalize" if _ended(state) else "gate"


def after_gate(state: RunState) -> Literal["test", "finalize"]:
    gate = state.get("gate")
    return "test" if (gate is None or gate["approved"]) and not _ended(state) else "finalize"


def after_test(
    state: RunState, max_iterations: int, fallback: bool = False, verifier: bool = False,
) -> Literal["reflect", "escalate", "verify", "finalize"]:
    """Another round while the budget lasts; with a fallback model, one more budget of rounds for it.

    With the verifier on, a passing run is scored first; a round the verifier asked for goes back to it
    whatever its outcome (a failing one is undone there: the verifier never costs a verified change).
    """
    report = state.get("report")
    passed = bool(report and report.ok)
    if not _ended(state) and verifier and (passed or (state.get("verdict") or {}).get("next") == "code"):
        return "verify"
    if _ended(state) or passed:
        return "finalize"
    budget = max_iterations * (2 if state.get("escalated") else 1)
    if state.get("iteration", 0) < budget:
        return "reflect"
    return "escalate" if fallback and not state.get("escalated") else "finalize"


def after_reflect(state: RunState, max_revisions: int) -> Literal["code", "replan", "finalize"]:
    if _ended(state):
        return "finalize"
    sigs = state.get("signatures") or []
    # The same failure twice after a change that was applied: the plan is wrong. (When nothing could be
    # applied the plan was not tried; the coder gets its tool errors instead.)
    repeated = len(sigs) >= 2 and sigs[-1] == sigs[-2] and bool(state.get("edits_applied"))
    return "replan" if repeated and state.get("revisions", 0) < max_revisions else "code"


def after_verify(state: RunState) -> Literal["code", "finalize"]:
    return "code" if (state.get("verdict") or {}).get("next") == "code" and not _ended(state) else "finalize"
