"""The reflect node: classify the failure, recall similar ones, ask for a hypothesis."""

from __future__ import annotations

from agent_core.agents.reflector.agent import diagnose
from agent_core.agents.reflector.schema import Reflection
from agent_core.agents.reflector.signatures import classify, exception_type, failure_text, signature
from agent_core.llm.base import StructuredOutputError
from agent_core.models import TestReport
from agent_core.pipeline.coder.edits import UNCHANGED
from agent_core.pipeline.context import focus_from_report, relevant_files, render_files
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.state import ReflectionNote, RunState


def _past(deps: RunDeps, report: TestReport) -> str:
    lines = []
    for f in report.failures[:2]:
        for past in deps.memory.similar_failures(signature(f, report), f.message, limit=2):
            fix = f"; fixed by:\n{past.fix[:600]}" if past.fix else " (unresolved)"
            lines.append(f"- {past.error_type}: {past.message[:200]}{fix}")
    return "\n".join(lines) or "(none)"


def record_failures(deps: RunDeps, report: TestReport) -> list[str]:
    """Store the report's failures in memory; return their signatures."""
    sigs = []
    for f in report.failures[:5]:
        sig = signature(f, report)
        deps.memory.record_failure(sig, exception_type(f) or classify(f, report), f.message[:500])
        sigs.append(sig)
    return sigs


async def _diagnose(state: RunState, deps: RunDeps, report: TestReport, category: str, past: str) -> Reflection:
    """Ask the reflector model; the files it sees are without the attempt when that was undone."""
    files = render_files(deps.shadow, relevant_files(deps.shadow, [], report), budget=6000,
                         focus=focus_from_report(report))
    diff = state.get("last_diff") or "(no change was applied)"
    if state.get("undone"):
        diff = f"(undone, as it did not help: the files below are without it)\n{diff}"
    try:
        return await diagnose(deps.llm, deps.prompts["reflector"], category=category, failure=failure_text(report),
                              diff=diff, files=files, past=past)
    except StructuredOutputError as exc:  # a small model may fail here; the failure text still guides the coder
        return Reflection(hypothesis=f"No diagnosis available ({exc}); read the failure output.", confidence="low")


async def reflect(state: RunState, deps: RunDeps) -> RunState:
    """Turn the failing report into a specific hypothesis for the next coding round."""
    iteration = state.get("iteration", 0)
    deps.phase("reflecting", f"reflecting {iteration}/{deps.settings.max_iterations}",
               deps.progress(iteration - 1, 0.85))
    report = state["report"]
    assert report is not None  # reflecting follows a failing test run
    first = report.failures[0] if report.failures else None
    category = classify(first, report) if first else ("timeout" if report.timed_out else "other")
    past = _past(deps, report)
    if not state.get("edits_applied"):
        # Nothing changed, so there is nothing new to diagnose: the coder gets its tool errors and tries again.
        echoed = (state.get("tool_errors") or []) == [UNCHANGED]
        answer = Reflection(hypothesis=(
            "The last answer repeated the code unchanged, so the bug is still in it." if echoed
            else "The last edits could not be applied; nothing changed."), confidence="low")
    else:
        answer = await _diagnose(state, deps, report, category, past)
    recorded = [*(state.get("recorded") or []), *record_failures(deps, report)]
    sig = state["signatures"][-1] if state.get("signatures") else ""
    reflection = ReflectionNote(hypothesis=answer.hypothesis, file=answer.file, change=answer.change,
                                confidence=answer.confidence, category=category, signature=sig)
    deps.journal.write("reflection", **reflection, past=past)
    return RunState(reflection=reflection, recorded=recorded)
