"""Graph nodes: plain async functions of (state, deps) returning the keys they change.

Coding lives in coding.py and reflection in reflecting.py; these are the rest:
the baseline test run, planning and replanning, the sandboxed test run and
finalisation (the safety gate node is gating.py's, reached as `nodes.gate`).
"""

from __future__ import annotations

from agent_core.agents.planner.agent import propose_plan
from agent_core.agents.planner.validation import PlanError, textual_preplan, validate_plan
from agent_core.agents.reflector.signatures import failure_text, report_signature
from agent_core.events import TestReportEvent
from agent_core.models import Plan, TestReport
from agent_core.pipeline.attempts import first_state, keep_or_rewind
from agent_core.pipeline.context import layout
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.gating import gate as gate  # the gate node, re-exported for graph.py
from agent_core.pipeline.goal import editor_pointer, target_text
from agent_core.pipeline.recall import planner_hints, remember_outcome
from agent_core.pipeline.reflecting import record_failures
from agent_core.pipeline.routers import no_tests_yet
from agent_core.pipeline.state import RunState
from agent_core.pipeline.testrun import run_checked
from agent_core.pipeline.verification import guard_verification, protect_collected
from agent_core.testing.baseline_check import broken_baseline
from agent_core.workspace.changeset import compute_change_set


async def _run_tests(deps: RunDeps, baseline: TestReport | None) -> tuple[TestReport, list[str]]:
    report, undone = await run_checked(deps, baseline)
    deps.journal.write("test_report", report=report.model_dump(mode="json"))
    deps.hooks.emit(TestReportEvent(run_id=deps.run_id, report=report))
    return report, undone


async def baseline(state: RunState, deps: RunDeps) -> dict:
    """Run the tests once before any change: the failing output guides planner and coder."""
    deps.phase("testing", "running the tests before any change", 3)
    report, _ = await _run_tests(deps, None)  # nothing changed yet: nothing to put back
    protect_collected(deps, report)  # what the project's pytest collects is a test file (verification.py)
    broken = broken_baseline(report, deps.shadow.root, deps.settings.test_command)
    goal_tests_judge = deps.settings.verify.goal_tests and bool((deps.request.goal or "").strip())
    if broken and not (
        goal_tests_judge and no_tests_yet(report.model_dump(mode="json"))
    ):  # goal_tests.py  # an environment problem, not failing tests: stop before any model call
        deps.journal.write("baseline_broken", error=broken)
        return {
            "baseline": report.model_dump(mode="json"),
            "report": report.model_dump(mode="json"),
            "status": "error",
            "error": broken,
            "error_kind": "config",
        }
    recorded = [] if report.ok else record_failures(deps, report)
    return {
        "baseline": report.model_dump(mode="json"),
        "report": report.model_dump(mode="json"),
        "recorded": recorded,
        "best": first_state(report),
    }


def _goal_context(state: RunState, deps: RunDeps) -> str:
    parts = [layout(deps.shadow)]
    if deps.request.target_file:
        parts.append(f"The request is about {deps.request.target_file}.")
    report = TestReport.model_validate(state["baseline"]) if state.get("baseline") else None
    if report and not report.ok:
        parts.append("Failing tests now:\n" + failure_text(report, limit=1500))
    hints = planner_hints(deps, state["goal"])
    if hints:
        parts.append(hints)
    return "\n\n".join(parts)


async def _llm_plan(state: RunState, deps: RunDeps, extra: str = "") -> dict:
    context = _goal_context(state, deps) + (f"\n\n{extra}" if extra else "")
    rejected: str | None = None
    for _attempt in range(2):  # a plan that fails validation is re-requested once, with the error
        proposal = await propose_plan(
            deps.llm, deps.prompts["planner"], goal=state["goal"], context=context, rejected=rejected
        )
        try:
            plan = validate_plan(proposal)
        except PlanError as exc:
            rejected = str(exc)
            deps.journal.write("plan", plan=proposal.model_dump(mode="json"), error=rejected)
            continue
        deps.journal.write("plan", plan=plan.model_dump(mode="json"), source="llm")
        return {"plan": plan.model_dump(mode="json"), "plan_source": "llm", "fresh_plan": True}
    return {"status": "error", "error": rejected}


async def plan(state: RunState, deps: RunDeps) -> dict:
    """A textual pre-plan for 'fix the failing tests', else the planner model."""
    deps.phase("planning", "planning", 8)
    report = TestReport.model_validate(state["baseline"]) if state.get("baseline") else None
    pointer = editor_pointer(deps.request, target_text(deps.request, deps.shadow))
    quick = textual_preplan(deps.request.goal, report, pointer) if state.get("kind") == "fix" else None
    if quick is not None:
        deps.journal.write("plan", plan=quick.model_dump(mode="json"), source="textual")
        return {"plan": quick.model_dump(mode="json"), "plan_source": "textual", "fresh_plan": True}
    return await _llm_plan(state, deps)


def _replan_context(state: RunState) -> str:
    """The failed plan, the failing output, the last reflection and unapplied edits (seeds 001 and 003)."""
    report = TestReport.model_validate(state["report"])
    old = Plan.model_validate(state["plan"])
    lines = [
        f"The previous plan did not work; the same failure repeated twice in a row.\nFailed plan "
        f"(approach: {old.approach or '-'}):"
    ]
    lines += [f"- {s.id}: {s.description} (files: {', '.join(s.files) or '-'})" for s in old.subtasks]
    lines += ["Failing test output:", failure_text(report, limit=1200)]
    r = state.get("reflection")
    if r:
        where = f" in {r['file']}" if r.get("file") else ""
        lines.append(
            f"Last analysis ({r.get('confidence')} confidence): {r.get('hypothesis')}"
            f"\nSuggested change{where}: {r.get('change') or '-'}"
        )
    if state.get("tool_errors"):
        lines.append("Edits that could not be applied:\n" + "\n".join(state["tool_errors"]))
    lines.append("Propose a different approach.")
    return "\n".join(lines)


async def replan(state: RunState, deps: RunDeps) -> dict:
    """The same failure came back twice: ask for a different plan."""
    deps.phase(
        "replanning",
        f"replanning ({state.get('revisions', 0) + 1}/{deps.settings.max_revisions})",
        deps.progress(state.get("iteration", 0), 0),
    )
    out = await _llm_plan(state, deps, _replan_context(state))
    return {**out, "revisions": state.get("revisions", 0) + 1, "reflection": state.get("reflection")}


def _reuse(state: RunState, deps: RunDeps) -> TestReport | None:
    """The whole suite's report the code node already ran on this very shadow (a verified candidate), if any."""
    if not state.get("checked"):
        return None
    report = TestReport.model_validate(state["checked"])
    deps.journal.write("test_report", report=report.model_dump(mode="json"), reused=True)
    deps.hooks.emit(TestReportEvent(run_id=deps.run_id, report=report))
    return report


async def escalate(state: RunState, deps: RunDeps) -> dict:
    """The first model's rounds are spent: the fallback model gets as many more.

    The failure history starts again from the last one, so the first model's repeated failure does not send
    the fallback's first round to a replan.
    """
    profile = deps.settings.fallback_profile("coder")
    deps.journal.write("escalate", model=profile.model if profile else None, after_rounds=state.get("iteration", 0))
    deps.notice(f"escalating to the fallback model {profile.model if profile else '?'}")
    return {"escalated": True, "signatures": (state.get("signatures") or [])[-1:]}


async def test(state: RunState, deps: RunDeps) -> dict:
    """Run the tests in the sandbox on the shadow workspace."""
    iteration = state.get("iteration", 0)
    deps.phase(
        "testing", f"testing (iteration {iteration + 1}/{deps.settings.max_iterations})", deps.progress(iteration, 0.55)
    )
    # A candidate the code node already verified on this very shadow is not run again, unless the files that
    # judge a run had to be put back since (then its report is not to be trusted).
    undone = guard_verification(deps, "since the last test run")
    report = None if undone else _reuse(state, deps)
    if report is None:
        baseline_report = TestReport.model_validate(state["baseline"]) if state.get("baseline") else None
        report, more = await _run_tests(deps, baseline_report)
        undone += more
    out: dict = {
        "report": report.model_dump(mode="json"),
        "iteration": iteration + 1,
        "checked": None,
        "last_diff": compute_change_set(deps.shadow).unified_diff(),
    }
    if undone:
        out["tool_errors"] = [*(state.get("tool_errors") or []), *undone]
    if not report.ok:
        out["signatures"] = [*(state.get("signatures") or []), report_signature(report)]
        out.update(keep_or_rewind(deps.shadow, state, report, out["last_diff"]))
    return out


async def finalize(state: RunState, deps: RunDeps) -> dict:
    """Decide the status from the last sandboxed test report; a verified outcome goes to memory (recall.py)."""
    deps.phase("finalizing", "finalizing", 97)
    if state.get("found_by") == "search":  # a verified single-edit fix: remembered like any verified change
        await remember_outcome(state, deps, state["status"], compute_change_set(deps.shadow))
        return {}
    if state.get("status"):
        return {}
    report = TestReport.model_validate(state["report"]) if state.get("report") else None
    passed = bool(report and report.ok)
    if state.get("iteration", 0) == 0:
        return {"status": "passed" if passed else "failed"}  # nothing was attempted
    status = ("fixed" if state.get("kind") == "fix" else "ok") if passed else "unfixed"
    await remember_outcome(state, deps, status, compute_change_set(deps.shadow))
    return {"status": status}
