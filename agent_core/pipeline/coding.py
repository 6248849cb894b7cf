"""The code node: one coder call per plan step, edits applied with the file tools."""

from __future__ import annotations

from agent_core.agents.coder.agent import write_edits
from agent_core.llm.base import StructuredOutputError
from agent_core.models import Plan, SubTask, TestReport
from agent_core.pipeline.context import focus_from_report, relevant_files, render_files
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.edits import apply_edits
from agent_core.pipeline.state import RunState
from agent_core.pipeline.verification import tests_protected
from agent_core.reflection import failure_text
from agent_core.workspace.testfiles import is_test_file


def _hypothesis(state: RunState) -> str:
    """What earlier attempts taught: the undone attempts and the last analysis (empty on the first try)."""
    parts = []
    tried = state.get("tried") or []
    if tried:
        parts.append("Tried before; the tests still failed, so it was undone (do not repeat it):\n"
                     + "\n\n".join(tried))
    r = state.get("reflection")
    if r:
        where = f" in {r['file']}" if r.get("file") else ""
        suggested = f"\nSuggested change{where}: {r['change']} (confidence: {r['confidence']})" if r.get("change") else ""
        parts.append(f"Analysis of the last attempt: {r['hypothesis']}{suggested}")
    return "\n" + "\n\n".join(parts) + "\n" if parts else ""  # its own paragraph in the prompt, or nothing


RETRY_WARMING = 0.3  # added to the coder's temperature per earlier attempt, up to RETRY_MAX_TEMPERATURE
RETRY_MAX_TEMPERATURE = 1.0


def _temperature(state: RunState, deps: RunDeps) -> float | None:
    """The configured temperature on a first try; warmer on each retry, so a retry is not a rerun."""
    earlier = state.get("iteration", 0)
    if not earlier:
        return None
    configured = deps.settings.profile("coder").temperature
    return max(configured, min(RETRY_MAX_TEMPERATURE, configured + RETRY_WARMING * earlier))


def _steps_for_round(state: RunState) -> list[SubTask]:
    plan = Plan.model_validate(state["plan"])
    if state.get("fresh_plan") or not state.get("reflection"):
        return plan.subtasks  # first round of this plan: every step, in order
    # A retry after a reflection: one call that covers the plan's goal with the new hypothesis.
    summary = "; ".join(s.description for s in plan.subtasks)
    files = sorted({f for s in plan.subtasks for f in s.files})
    return [SubTask(id="retry", description=summary, priority=5, files=files)]


async def code(state: RunState, deps: RunDeps) -> dict:
    """Run the coder for this round's steps on the shadow workspace."""
    # The failures of the code the coder sees: the best state so far (an attempt that did no better was undone).
    report_data = (state.get("best") or {}).get("report") or state.get("report") or state.get("baseline")
    report = TestReport.model_validate(report_data) if report_data else None
    failure = failure_text(report) if report and not report.ok else "(the tests do not fail yet)"
    steps = _steps_for_round(state)
    applied, errors = 0, []
    previous_errors = "\n".join(state.get("tool_errors") or [])
    iteration = state.get("iteration", 0)
    protect_tests = tests_protected(deps.request)
    for k, step in enumerate(steps, 1):
        deps.phase("coding", f"coding step {k}/{len(steps)}", deps.progress(iteration, 0.1 + 0.3 * k / len(steps)))
        shown = relevant_files(deps.shadow, step.files, report)
        files = render_files(deps.shadow, shown, tests_read_only=protect_tests, focus=focus_from_report(report))
        try:
            output = await write_edits(
                deps.llm, deps.prompts["coder"], task=step.description, files=files, failure=failure,
                hypothesis=_hypothesis(state), tool_errors=previous_errors, temperature=_temperature(state, deps),
                default_path=next((f for f in shown if not is_test_file(f)), ""),
            )
        except StructuredOutputError as exc:
            errors.append(f"- the answer was not valid: {exc}")
            continue
        n, errs = apply_edits(deps.tools, output, protect_tests, sources=[f for f in shown if not is_test_file(f)])
        applied += n
        errors.extend(errs)
    return {"edits_applied": applied, "tool_errors": errors, "fresh_plan": False}
