"""The graph state: JSON-serialisable, so a LangGraph checkpointer can persist it.

Models are stored as plain dicts (`model_dump(mode="json")`); the run's
dependencies (LLM client, sandbox, memory, shadow, journal) live in
`RunDeps`, never in the state.
"""

from __future__ import annotations

from typing import Any, TypedDict


class RunState(TypedDict, total=False):
    """Everything a run knows between nodes."""

    run_id: str
    kind: str  # "fix" | "task"
    goal: str
    explicit_goal: bool  # the user named a goal or pointed at diagnostics: passing tests alone do not end the run
    plan: dict[str, Any] | None  # models.Plan, subtasks in execution order
    plan_source: str  # "textual" | "llm"
    fresh_plan: bool  # the next coding round is the first of this plan: run every step
    iteration: int  # code/test rounds done
    revisions: int  # replans done
    baseline: dict[str, Any] | None  # models.TestReport before any change
    report: dict[str, Any] | None  # models.TestReport of the latest run
    signatures: list[str]  # failure signature of every failing run, in order
    reflection: dict[str, Any] | None  # agents.reflector.schema.Reflection + category/signature
    recorded: list[str]  # per-failure signatures recorded in memory (resolved when the run is fixed)
    tool_errors: list[str]  # edits that could not be applied in the last coding round
    edits_applied: int
    gate: dict[str, Any] | None  # {"violations", "approved", "unchecked", "approved_files"} (nodes/gate.py)
    dropped: list[dict[str, str]]  # {"path", "reason"}: files a candidate changed that are not part of the fix
    last_diff: str
    shadow_files: dict[str, str | None]  # text of every file the run changed (rebuilds the shadow on resume)
    best: dict[str, Any] | None  # {"score", "files", "report"}: the state with the fewest failures so far
    undone: bool  # the last attempt did no better than `best` and was rewound
    tried: list[str]  # attempts that did not beat `best` and were undone: diff and outcome, for the coder
    suspects: list[dict[str, Any]]  # localized functions/lines, best first (coder/suspects.py has the shape)
    checked: dict[str, Any] | None  # models.TestReport of the whole suite on the shadow as the code node left it
    escalated: bool  # the first model's rounds failed: the fallback model codes from here on
    goal_tests: dict[str, Any] | None  # {"path", "tests", "dropped"}: the tester's tests of the goal (nodes/specify.py)
    verdict: dict[str, Any] | None  # the verifier's last {"score", "feedback", "accepted", "round"} (nodes/verify.py)
    found_by: str  # "search" when a mutant fixed the run before any model call
    search_error: str  # why the search's driver collected or tried nothing (a usage error, a crash), when it failed
    status: str  # set by finalize or by a node that ends the run
    error: str | None
    error_kind: str  # with status "error": "config" for an environment problem (the CLI exits 2)


def initial_state(run_id: str, kind: str, goal: str, explicit_goal: bool = False) -> RunState:
    return RunState(
        run_id=run_id,
        kind=kind,
        goal=goal,
        explicit_goal=explicit_goal,
        plan=None,
        plan_source="",
        fresh_plan=False,
        iteration=0,
        revisions=0,
        baseline=None,
        report=None,
        signatures=[],
        reflection=None,
        recorded=[],
        tool_errors=[],
        edits_applied=0,
        gate=None,
        last_diff="",
        shadow_files={},
        best=None,
        undone=False,
        tried=[],
        status="",
        error=None,
    )
