"""The verifier node (seeds 000/001): a model scores the verified diff against the goal.

Runs after a test run that passed, when `verify.verifier` is on. The model
(agents/verifier, on the reflector's model, accounted as `verifier`) gives a
score from 0 to 1, feedback and improvements. A score at or above
`verify.threshold` accepts the change. Below it, while `verify.verifier_rounds`
allow, the run goes back to the coder for one more round with the feedback
as the analysis of the last attempt; the passing state is kept as the best
one, so a round that breaks a test is undone and the run ends with the
change the tests verified. The verifier never overrules a test: it is asked
only about a change whose tests pass, and a run whose tests pass ends
`fixed`/`ok` whatever the last score (the score and feedback are in the
result's `details.verdict`, the journal's `verdict` records and the trace).
A verifier call that fails or answers nothing readable is journalled and
accepts the change: the tests decided it already.
"""

from __future__ import annotations

import asyncio

from agent_core.agents.verifier.agent import UnreadableEvaluation, evaluate
from agent_core.llm.base import LLMError
from agent_core.models import TestReport
from agent_core.pipeline.attempts import best_state
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.state import ReflectionNote, RunState, Verdict
from agent_core.workspace.changeset import compute_change_set

DIFF_CHARS = 6000
TIMEOUT_S = 90.0


def _tests_line(report: TestReport, state: RunState) -> str:
    goal = state.get("goal_tests")
    extra = ""
    if goal and goal["tests"]:
        extra = f"; the goal's own tests {', '.join(goal['tests'])} in {goal['path']} pass"
    skipped = f", {report.skipped} skipped" if report.skipped else ""
    return f"{report.passed} passed, 0 failed{skipped}{extra}"


def _round_failed(state: RunState, deps: RunDeps) -> RunState:
    """The verifier's extra round broke a test: the shadow was rewound to the verified state; end with it."""
    before, best = state["verdict"], state["best"]
    assert before is not None and best is not None  # this route runs after a verdict on a best
    verdict = before.copy()
    note = "the verifier's round failed the tests; the change verified before it stands"
    verdict.update(Verdict(next="finalize", note=note))
    deps.journal.write("verdict", **verdict)
    deps.notice(note, "warning")
    return RunState(verdict=verdict, report=best["report"])


async def verify(state: RunState, deps: RunDeps) -> RunState:
    """Score the verified diff; accept it, or send the run back for another round with the feedback."""
    report = state["report"]
    assert report is not None  # the verifier follows a test run
    if not report.ok:
        return _round_failed(state, deps)
    cfg = deps.settings.verify
    deps.phase("verifying", "the verifier reads the change", 95)
    previous = state.get("verdict")
    rounds = previous.get("round", 0) if previous else 0
    diff = compute_change_set(deps.shadow).unified_diff()[:DIFF_CHARS]
    try:
        answer = await asyncio.wait_for(
            evaluate(
                deps.llm,
                deps.prompts["verifier"],
                goal=state.get("goal") or "",
                diff=diff,
                tests=_tests_line(report, state),
                threshold=cfg.threshold,
            ),
            TIMEOUT_S,
        )
    except (TimeoutError, LLMError, UnreadableEvaluation) as exc:
        verdict = Verdict(
            score=None, feedback="", improvements=[], accepted=True, round=rounds, threshold=cfg.threshold,
            next="finalize",
            note=f"the verifier gave no usable answer ({str(exc)[:200] or type(exc).__name__}); the tests decide",
        )
        deps.journal.write("verdict", **verdict)
        return RunState(verdict=verdict)
    accepted = answer.score >= cfg.threshold
    again = not accepted and rounds < cfg.verifier_rounds
    verdict = Verdict(
        score=answer.score, feedback=answer.feedback, improvements=answer.improvements, accepted=accepted,
        round=rounds + (1 if again else 0), threshold=cfg.threshold, next="code" if again else "finalize",
    )
    deps.journal.write("verdict", **verdict)
    if not again:
        return RunState(verdict=verdict)
    deps.notice(
        f"the verifier scored the change {answer.score:.2f} (< {cfg.threshold:g}): another round. {answer.feedback}"
    )
    return RunState(
        verdict=verdict,
        fresh_plan=False,
        undone=False,
        best=best_state(deps.shadow, report),
        reflection=ReflectionNote(
            hypothesis=f"The tests pass, but a review scored the change {answer.score:.2f} of 1 "
            f"against the goal: {answer.feedback}",
            file=None,
            change="; ".join(answer.improvements) or None,
            confidence="medium",
        ),
    )
