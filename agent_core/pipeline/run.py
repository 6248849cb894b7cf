"""One fix/task run: build the run's dependencies, invoke the graph, shape the RunResult."""

from __future__ import annotations

from pathlib import Path
from typing import Any, cast

from agent_core.agents.prompts import run_prompts
from agent_core.events import MessageEvent, RunHooks
from agent_core.journal.writer import Journal
from agent_core.llm.factory import make_llm_client
from agent_core.llm.probe import EndpointWatch
from agent_core.memory.base import MemoryStore, NullMemory
from agent_core.models import (
    ChangeSet,
    DroppedFile,
    FoundBy,
    GoalTests,
    RunDetails,
    RunRequest,
    RunResult,
    RunStatus,
    TestReport,
    VerifierVerdict,
)
from agent_core.pipeline.checkpoint import run_checkpointer
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.explain import explain_change
from agent_core.pipeline.goal import run_goal
from agent_core.pipeline.graph import build_graph
from agent_core.pipeline.memory_guard import GuardedMemory
from agent_core.pipeline.state import RunState, initial_state
from agent_core.sandbox.factory import sandbox_for_run
from agent_core.settings import Settings
from agent_core.testing.runner import run_tests
from agent_core.workspace.changeset import compute_change_set
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.tools import FileTools, ToolResult

RECURSION_LIMIT = 200
FOUND_BY_NOTE: dict[FoundBy, str] = {  # what the summary line adds about who found the change
    "search": " by a single-edit mutant the search found, with no model call: review it",
    "infill": " by the model's fill of one hole at a suspicious line, tried and verified like the search's candidates: "
              "review it",
}


def open_run_memory(settings: Settings, notice: Any, workspace: Path | None = None) -> MemoryStore:
    """The project's memory store (memory/factory.py), or NullMemory when the store is not available."""
    try:  # the memory package is a removable feature (like the CLI's subcommands): lazy on purpose
        from agent_core.memory.factory import open_memory
    except ImportError:
        return NullMemory()
    return GuardedMemory(open_memory(settings, on_error=notice, workspace=workspace), notice)


async def run_pipeline(
    settings: Settings, request: RunRequest, hooks: RunHooks, journal: Journal, checkpointer: Any = None,
    resume: bool = False, deadline: float | None = None, endpoint: EndpointWatch | None = None,
) -> RunResult:
    """Run the graph on a shadow copy of the workspace; never touches the workspace itself.

    Checkpointed in the workspace's SQLite checkpointer (or `checkpointer`) after every node; with
    `resume` the run continues from its last checkpoint (pipeline/checkpoint.py). `deadline` (time.monotonic()):
    where settings.time_budget_s ends the run with its best attempt (pipeline/timebudget.py). `endpoint`: the
    model endpoint's probe, which the search waits for (llm/probe.py).
    """
    run_id = journal.run_id

    def notice(text: str) -> None:
        hooks.emit(MessageEvent(run_id=run_id, level="warning", text=text))

    prompts = run_prompts(settings, request.workspace, journal)
    sandbox = sandbox_for_run(settings, hooks, run_id)
    memory = open_run_memory(settings, notice, request.workspace)
    llm = make_llm_client(settings, journal, on_wait=getattr(hooks, "llm_waiting", None), deadline=deadline)
    try:
        async with run_checkpointer(journal, checkpointer) as checkpoint:
            with ShadowWorkspace(request.workspace, request.overlays) as shadow:
                checkpoint.note_shadow(shadow)

                def on_tool(tool: str, args: dict[str, Any], result: ToolResult) -> None:
                    journal.write("tool_call", tool=tool, args=args, result=result.result, ok=result.ok)

                deps = RunDeps(settings=settings, request=request, llm=llm, sandbox=sandbox, memory=memory,
                               hooks=hooks, journal=journal, shadow=shadow, tools=FileTools(shadow, on_tool),
                               prompts=prompts, run_tests=run_tests, deadline=deadline, endpoint=endpoint)
                graph = build_graph(deps, checkpoint.saver)
                config = {"configurable": {"thread_id": run_id}, "recursion_limit": RECURSION_LIMIT}
                explicit = bool((request.goal or "").strip() or request.diagnostics)
                initial = None if resume else initial_state(run_id, request.kind, run_goal(request, shadow), explicit)
                final = await checkpoint.invoke(graph, config, initial, shadow)
                attempt = compute_change_set(shadow)
                explanation = await _explanation(llm, prompts, journal, final, attempt)
    finally:
        journal.note_usage(llm.total_usage(), llm.usage_by_role())
        close = getattr(llm, "aclose", None)
        if close is not None:
            await close()
    result = _result(request, run_id, final, attempt, llm, journal)
    result.explanation = explanation
    return result


async def _explanation(llm: Any, prompts: dict[str, str], journal: Journal, final: RunState,
                       attempt: ChangeSet) -> str:
    """One or two sentences on a verified change (pipeline/explain.py); "" for an unverified run."""
    if final.get("status") not in ("fixed", "ok"):
        return ""
    baseline, report = final.get("baseline"), final.get("report")
    # A mutant the search found describes itself (the changed function, the tests it fixes): the templated
    # sentence keeps a search fix at 0 tokens.
    text = await explain_change(llm, prompts["explainer"], journal, goal=final.get("goal") or "",
                                change_set=attempt, baseline=baseline, report=report,
                                use_model=final.get("found_by") not in ("search", "infill"))
    rival = final.get("search_rival")  # another green edit and an input they differ on (search/driver/distinguish.py)
    return f"{text} {rival}" if rival and text else text


def _result(request: RunRequest, run_id: str, final: RunState, attempt: ChangeSet, llm: Any,
            journal: Journal) -> RunResult:
    status = cast(RunStatus, final.get("status") or "error")  # finalize sets one of them
    verified = status in ("fixed", "ok")
    journal.write("change_set", files=attempt.files, diff=attempt.unified_diff(), verified=verified)
    report = final.get("report")
    last_try = final.get("last_diff") or attempt.unified_diff()  # the shadow may hold the best state, rewound
    found_by: FoundBy | None = (final.get("found_by") or "model") if verified else None  # the search (infill)
    # names itself in the state; any other verified change is the planner/coder loop's
    summary = _summary(status, report, attempt) + (FOUND_BY_NOTE.get(found_by, "") if found_by else "")
    # the shadow holds the best state: "Show best attempt" (budget_spent: the time budget ended the rounds)
    best = status in ("unfixed", "budget_spent") and bool(attempt.changes)
    best_state = final.get("best") if best else None
    goal_tests = final.get("goal_tests")  # the tester's tests of a task's goal
    return RunResult(
        run_id=run_id, kind=request.kind, status=status, iterations=final.get("iteration", 0),
        change_set=attempt if verified else ChangeSet(), report=report, usage=llm.total_usage(),
        usage_by_role=llm.usage_by_role(), error=final.get("error"), summary=summary,
        error_kind=final.get("error_kind") or None,
        goal_tests=GoalTests.model_validate(goal_tests, from_attributes=True) if goal_tests else None,
        dropped=[DroppedFile.model_validate(d, from_attributes=True) for d in final.get("dropped") or []],
        attempt_diff=last_try if not verified else "",  # the last unverified attempt, for inspection only
        best_attempt=attempt if best else None,
        best_report=best_state["report"] if best_state else None,
        found_by=found_by, details=_details(final), refused=list(final.get("refused") or []),
        caveat=final.get("caveat") or None,
    )


def _details(final: RunState) -> RunDetails:
    """What the journal and the benchmarks read of the run (RunResult.details)."""
    verdict = final.get("verdict")
    return RunDetails(plan=final.get("plan"), plan_source=final.get("plan_source", ""),
                      revisions=final.get("revisions", 0),
                      verdict=VerifierVerdict.model_validate(verdict) if verdict else None,
                      search_error=final.get("search_error") or None, search_rival=final.get("search_rival") or None)


def _summary(status: str, report: TestReport | None, attempt: ChangeSet) -> str:
    tests = (f"{report.passed} passed, {report.failed} failed, {report.errors} errors, {report.skipped} skipped"
             if report else "no test run")
    files = ", ".join(attempt.files) if attempt.changes else "no files"
    return f"{status}: {tests}; changed {files}"
