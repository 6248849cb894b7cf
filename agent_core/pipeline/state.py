"""The graph state: typed, and round-tripped by the LangGraph checkpointer so a run can be resumed.

Test reports and the plan are kept as `TestReport` and `Plan` models (`stored()`: without the per-test
outcomes and collected files, which stay out of the checkpoint as out of the
journal); the checkpointer's serializer stores a pydantic model with its class
and rebuilds it on resume, for the classes `checkpoint.py` allows
(`STATE_MODELS`). Every other structured key is a TypedDict of plain values.
The run's dependencies (LLM client, sandbox, memory, shadow, journal) live in
`RunDeps`, never in the state. A node returns a partial `RunState`: the keys
it changes.
"""

from __future__ import annotations

from typing import Literal, TypedDict

from agent_core.models import Plan, TestReport

STATE_MODELS: tuple[type, ...] = (TestReport, Plan)  # the pydantic models the state holds (checkpoint.py allows them)


def stored(report: TestReport) -> TestReport:
    """`report` as the state keeps it: a copy of its own, without the per-test outcomes and collected files
    (left out of dumps, so a resumed run sees exactly what an uninterrupted one does)."""
    return report.model_copy(update={"outcomes": {}, "test_files": []}, deep=True)


class BestAttempt(TypedDict):
    """The state with the fewest failures so far (attempts.py): its score, the files it changed, its report."""

    score: list[int]
    files: dict[str, str | None]
    report: TestReport


class SuspectNote(TypedDict):
    """A localized function and its lines, best first (evidence/spectrum.py `Suspect.as_dict`, coder/suspects.py)."""

    file: str
    function: str
    start_line: int
    end_line: int
    lines: list[int]
    score: float


class Violation(TypedDict):
    """One safety gate finding, as `events.SafetyViolation` dumps it."""

    file: str
    line: int
    rule: str
    message: str


class GateOutcome(TypedDict):
    """The gate node's last verdict (nodes/gate.py)."""

    violations: list[Violation]
    approved: bool
    unchecked: list[str]
    approved_files: dict[str, str | None]  # path -> the text the user approved (a non-code file named in the goal)


class Dropped(TypedDict):
    """A file a candidate changed that is not part of the fix, and why."""

    path: str
    reason: str


class GoalTestsNote(TypedDict):
    """The tester's tests of the goal (nodes/specify.py): the file, the tests kept, the tests dropped."""

    path: str
    tests: list[str]
    dropped: list[str]


class Verdict(TypedDict, total=False):
    """The verifier's last verdict (nodes/verify.py); `next` routes the run (routers.after_verify)."""

    score: float | None
    feedback: str
    improvements: list[str]
    accepted: bool
    round: int
    threshold: float
    next: Literal["code", "finalize"]
    note: str


class ReflectionNote(TypedDict, total=False):
    """The reflector's hypothesis (agents/reflector/schema.py `Reflection`) with the failure's category and
    signature (nodes/reflect.py), or the verifier's feedback as one (nodes/verify.py)."""

    hypothesis: str
    file: str | None
    change: str | None
    confidence: str
    category: str
    signature: str


class RunState(TypedDict, total=False):
    """Everything a run knows between nodes."""

    run_id: str
    kind: str  # "fix" | "task"
    goal: str
    explicit_goal: bool  # the user named a goal or pointed at diagnostics: passing tests alone do not end the run
    plan: Plan | None  # subtasks in execution order
    plan_source: str  # "textual" | "llm"
    fresh_plan: bool  # the next coding round is the first of this plan: run every step
    iteration: int  # code/test rounds done
    revisions: int  # replans done
    baseline: TestReport | None  # before any change
    report: TestReport | None  # of the latest run
    signatures: list[str]  # failure signature of every failing run, in order
    reflection: ReflectionNote | None
    recorded: list[str]  # per-failure signatures recorded in memory (resolved when the run is fixed)
    tool_errors: list[str]  # edits that could not be applied in the last coding round
    edits_applied: int
    gate: GateOutcome | None
    dropped: list[Dropped]  # files a candidate changed that are not part of the fix
    last_diff: str
    shadow_files: dict[str, str | None]  # text of every file the run changed (rebuilds the shadow on resume)
    best: BestAttempt | None
    undone: bool  # the last attempt did no better than `best` and was rewound
    tried: list[str]  # attempts that did not beat `best` and were undone: diff and outcome, for the coder
    suspects: list[SuspectNote]  # localized functions/lines, best first
    checked: TestReport | None  # the whole suite on the shadow as the code node left it
    escalated: bool  # the first model's rounds failed: the fallback model codes from here on
    goal_tests: GoalTestsNote | None
    verdict: Verdict | None
    found_by: str  # "search": the search's own edit fixed the run before any model call; "infill": the model's fill
    # of a hole the search cut, verified by the search
    search_error: str  # why the search's driver collected or tried nothing (a usage error, a crash), when it failed
    search_rival: str  # another edit that passes every test too, and an input they differ on (driver/distinguish.py)
    refused: list[str]  # candidates refused because they pass by swallowing the tests' errors (safety/swallows.py)
    caveat: str  # a fixed run whose change only adds an early return (safety/swallows.py)
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
