"""Domain models shared by every part of the engine.

Plain pydantic data: plans, change sets, test reports, usage and the request
and result of a run. Nothing here does I/O; the LSP layer and the CLI convert
these to their own shapes.
"""

from __future__ import annotations

import difflib
import secrets
import time
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

Role = Literal["planner", "coder", "tester", "reflector"]
ROLES: tuple[Role, ...] = ("planner", "coder", "tester", "reflector")

RunKind = Literal["fix", "gen_tests", "task", "test"]
RunStatus = Literal["fixed", "unfixed", "passed", "failed", "ok", "error", "cancelled", "budget_spent"]
# budget_spent: the run used up settings.token_budget and stopped there (like unfixed: nothing verified)
PlanSource = Literal["", "textual", "llm"]  # no plan yet, the goal's own words, the planner
FoundBy = Literal["search", "infill", "model"]
# who found a verified change: the zero-token mutant search, the model's infill candidates, the planner/coder loop



def new_run_id() -> str:
    """A run's id, short and sortable: 20261121-203512-ab12cd (it names the run's journal folder)."""
    return time.strftime("%Y%m%d-%H%M%S") + "-" + secrets.token_hex(3)

class SubTask(BaseModel):
    """One validated step of a plan."""

    id: str = Field(description="Unique id of the subtask, e.g. 't1'.")
    description: str = Field(description="What to change and why, concretely.")
    priority: int = Field(default=3, ge=1, le=5, description="1 (low) to 5 (high); breaks ties in ordering.")
    dependencies: list[str] = Field(default_factory=list, description="Ids of subtasks that must be done first.")
    files: list[str] = Field(default_factory=list, description="Workspace-relative files this step touches.")


class Plan(BaseModel):
    """An ordered, validated plan (subtasks already in topological order)."""

    approach: str = Field(default="", description="One or two sentences on the overall approach.")
    subtasks: list[SubTask] = Field(default_factory=list, description="Steps in execution order.")
    required_packages: list[str] = Field(default_factory=list, description="Packages the change needs.")


class Position(BaseModel):
    """A zero-based line/character position (UTF-16 conversion is the LSP layer's job)."""

    line: int = Field(ge=0)
    character: int = Field(ge=0)


class Span(BaseModel):
    """A zero-based, end-exclusive range in a text file."""

    start: Position
    end: Position


class TextEdit(BaseModel):
    """Replace `span` of the original text with `new_text`."""

    span: Span
    new_text: str


class FileChange(BaseModel):
    """The change to one workspace file, relative to what the run read."""

    path: str = Field(description="Workspace-relative POSIX path.")
    kind: Literal["modify", "create", "delete"]
    original: str | None = Field(default=None, description="Text the run started from (None when created).")
    new: str | None = Field(default=None, description="Text after the change (None when deleted).")
    edits: list[TextEdit] = Field(default_factory=list, description="Minimal edits turning original into new.")

    def unified_diff(self) -> str:
        before = (self.original or "").splitlines(keepends=True)
        after = (self.new or "").splitlines(keepends=True)
        a = "/dev/null" if self.kind == "create" else f"a/{self.path}"
        b = "/dev/null" if self.kind == "delete" else f"b/{self.path}"
        lines = difflib.unified_diff(before, after, a, b)
        return "".join(line if line.endswith("\n") else line + "\n\\ No newline at end of file\n" for line in lines)


class ChangeSet(BaseModel):
    """Every file a run changed; empty when nothing changed."""

    changes: list[FileChange] = Field(default_factory=list)

    @property
    def files(self) -> list[str]:
        return [c.path for c in self.changes]

    def unified_diff(self) -> str:
        return "".join(c.unified_diff() for c in self.changes)


class TestFailure(BaseModel):
    """One failing or erroring test, located in the test file and in the code under test."""

    nodeid: str
    file: str = Field(description="Test file, relative to the workspace.")
    line: int = Field(description="1-based line of the failing statement in the test file.")
    message: str
    traceback: str = ""
    kind: Literal["failure", "error"] = "failure"
    source_file: str | None = Field(default=None, description="Innermost workspace non-test file in the traceback.")
    source_line: int | None = Field(default=None, description="1-based line in source_file.")


class TestReport(BaseModel):
    """Structured outcome of one sandboxed test run. A failing run is data, not an exception."""

    passed: int = 0
    failed: int = 0
    errors: int = 0
    skipped: int = 0
    duration_s: float = 0.0
    timed_out: bool = False
    limit_hit: str | None = Field(default=None, description="Which sandbox limit ended the run, if any.")
    exit_code: int | None = None
    failures: list[TestFailure] = Field(default_factory=list)
    output: str = Field(default="", description="Trimmed combined output of the test command.")
    backend: str = ""
    slowest_pass_s: float | None = Field(
        default=None, description="Duration of the slowest passing test (known from our pytest plugin only)."
    )
    slowest_fail_s: float | None = Field(
        default=None,
        description="Duration of the slowest test that failed by itself, not stopped by the per-test bound "
        "(our pytest plugin only): fixed, it may run as long.",
    )
    outcomes: dict[str, str] = Field(
        default_factory=dict, exclude=True,
        description="Node id -> passed/failed/error/skipped/xfailed/xpassed of every test (our pytest plugin "
        "only). Left out of dumps (journals, graph state): a big suite's list is long; the MCP front end reports "
        "it, and testing/verdict.py reads it before the report is dumped.",
    )
    xfailed_on_assertion: list[str] = Field(
        default_factory=list, exclude=True,
        description="Node ids of the xfailed tests that failed on their own assertion (an AssertionError, "
        "pytest.fail, a pytest.raises that saw nothing raised), not on a crash of the code (our pytest plugin only).",
    )
    test_files: list[str] = Field(
        default_factory=list, exclude=True,
        description="Workspace-relative files the run's pytest collected tests from (our pytest plugin only): "
        "what the project's pytest counts as a test file, protected in a fix run.",
    )

    @property
    def ok(self) -> bool:
        return (
            not self.timed_out
            and self.limit_hit is None
            and self.failed == 0
            and self.errors == 0
            and self.exit_code in (0, None)
            and self.passed > 0
        )


class Usage(BaseModel):
    """Token accounting, for one role or for a whole run."""

    prompt_tokens: int = 0
    completion_tokens: int = 0
    llm_calls: int = 0

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens: what settings.token_budget counts."""
        return self.prompt_tokens + self.completion_tokens

    def add(self, other: Usage) -> None:
        self.prompt_tokens += other.prompt_tokens
        self.completion_tokens += other.completion_tokens
        self.llm_calls += other.llm_calls


class RunRequest(BaseModel):
    """What the user asked for, from the CLI or from the editor."""

    kind: RunKind
    workspace: Path
    goal: str | None = None
    hint: str | None = Field(default=None, description="The user's steer for the planner and coder, e.g. where the "
                             "bug is or what not to touch; it does not change what counts as fixed.")
    target_file: str | None = Field(default=None, description="Workspace-relative file the run is about.")
    target_span: Span | None = Field(default=None, description="Selection within target_file.")
    target_symbol: str | None = Field(default=None, description="Function or class name to focus on.")
    diagnostics: list[str] = Field(default_factory=list, description="Editor diagnostics to fold into the goal.")
    overlays: dict[str, str] = Field(default_factory=dict, description="Unsaved buffers: relative path -> text.")
    select: list[str] = Field(default_factory=list, description="A test run's node ids or paths (default: all).")
    run_id: str | None = None


class DroppedFile(BaseModel):
    """A file a candidate changed that was left out of the fix (a non-code file the user did not approve)."""

    path: str
    reason: str


class GoalTests(BaseModel):
    """A task's own tests, written by the tester before the change: where they went, which were kept or dropped."""

    path: str
    tests: list[str] = Field(default_factory=list)
    dropped: list[str] = Field(default_factory=list)


class SuspectedBug(BaseModel):
    """A generated test that fails because the code is wrong: the test, and the source line it implicates."""

    test: str
    file: str | None = None
    line: int | None = None
    message: str = ""


class GeneratedTest(BaseModel):
    """A generated test kept or dropped, and why."""

    test: str
    reason: str = ""


class Coverage(BaseModel):
    """Line coverage of the target, in percent, before and after the generated tests."""

    before: float = 0.0
    after: float = 0.0


class Survivor(BaseModel):
    """A mutant of the target that no test notices: where, and what it changes."""

    file: str
    line: int
    change: str
    text: str = ""


class MutationSummary(BaseModel):
    """A gen-tests run's mutation testing: mutants killed before and after its tests, and the survivors."""

    mutants: int
    killed_before: int
    killed_after: int
    not_run: int = 0
    stopped: str | None = Field(default=None, description="Why the mutation run ended early (None: all ran).")
    survivors: list[Survivor] = Field(default_factory=list)


class GenTestsSummary(BaseModel):
    """What a generate-tests run wrote, kept and found."""

    tests_written: int = 0
    tests_kept: int = 0
    tests_dropped: int = 0
    suspected_bugs: list[SuspectedBug] = Field(default_factory=list)
    coverage: Coverage = Field(default_factory=Coverage)
    dropped: list[GeneratedTest] = Field(default_factory=list)
    kept: list[GeneratedTest] = Field(default_factory=list)
    mutation: MutationSummary | None = None


class VerifierVerdict(BaseModel):
    """The verifier's last judgement of a change whose tests pass (pipeline/nodes/verify.py)."""

    score: float | None = Field(default=None, description="From 0 to 1; None when the verifier gave no usable "
                                "answer (the tests decide then).")
    feedback: str = Field(default="", description="What the verifier said of the change.")
    improvements: list[str] = Field(default_factory=list, description="What it asked to improve.")
    accepted: bool = Field(default=True, description="The score reached the threshold (or there was none).")
    round: int = Field(default=0, description="The rounds the verifier sent back to the coder so far.")
    threshold: float = Field(default=0.0, description="The score that accepts a change (verify.threshold).")
    next: Literal["code", "finalize"] = Field(default="finalize", description="Another coding round, or the end.")
    note: str = Field(default="", description="Why the verdict did not come from a score (a failed call, a round "
                      "that broke a test).")


class RunDetails(BaseModel):
    """How a fix or task run went, for the journal's summary.json and the benchmarks (no front end reads them)."""

    plan: Plan | None = Field(default=None, description="The last plan the run followed (None: no plan was made).")
    plan_source: PlanSource = Field(default="", description="Where the plan came from: the "
                                                      "goal's own words (textual) or the planner (llm).")
    revisions: int = Field(default=0, description="How many times the plan was revised.")
    verdict: VerifierVerdict | None = Field(default=None, description="The verifier's last verdict, when it ran.")
    search_error: str | None = Field(default=None, description="Why the search's driver collected or tried "
                                     "nothing (a usage error, a crash), when it failed.")
    search_rival: str | None = Field(default=None, description="Another edit that passes every test too, and an "
                                     "input on which it and the search's fix differ.")


class RunResult(BaseModel):
    """What a run produced. `change_set` is verified only when status is fixed/ok.

    The front ends (CLI, language server, MCP) read the typed fields; `details`
    holds what only the journal and the benchmarks read.
    """

    run_id: str
    kind: RunKind
    status: RunStatus
    iterations: int = 0
    change_set: ChangeSet = Field(default_factory=ChangeSet)
    report: TestReport | None = None
    usage: Usage = Field(default_factory=Usage)
    usage_by_role: dict[str, Usage] = Field(default_factory=dict)
    duration_s: float = 0.0
    error: str | None = None
    summary: str = ""
    explanation: str = Field(default="", description="One or two sentences on a verified change: what was wrong, "
                             "what changed, which test now passes.")
    error_kind: str | None = Field(default=None, description="What kind of error ended the run: bad_input, "
                                   "config, interrupted, ... (the CLI's exit status reads it).")
    cost_usd: float | None = Field(default=None, description="The run's cost, when every model it called has a price.")
    settings_warnings: list[str] = Field(default_factory=list, description="The settings' notices (ignored "
                                         "project keys, misspelt variables).")
    attempt_diff: str = Field(default="", description="An unverified run's last attempt, for inspection only.")
    best_attempt: ChangeSet | None = Field(default=None, description="An unfixed run's best attempt (the editor's "
                                           "Show best attempt), never verified.")
    best_report: TestReport | None = Field(default=None, description="The test report of best_attempt.")
    dropped: list[DroppedFile] = Field(default_factory=list, description="Files left out of the fix.")
    goal_tests: GoalTests | None = Field(default=None, description="A task's own tests, written by the tester.")
    gen_tests: GenTestsSummary | None = Field(default=None, description="A generate-tests run's counts and findings.")
    applied: bool = Field(default=False, description="The CLI applied the change set (--apply).")
    commit: str | None = Field(default=None, description="The commit the CLI made of it (--commit).")
    found_by: FoundBy | None = Field(default=None, description="Who found the verified change: the zero-token "
                                     "search, the model's infill candidates or the planner/coder loop (None: no "
                                     "verified change).")
    refused: list[str] = Field(default_factory=list, description="Candidates refused because they make the tests "
                               "pass by swallowing their errors (a return in a finally, an __exit__ returning True, "
                               "a broad except), each with where and why.")
    caveat: str | None = Field(default=None, description="A fixed run's warning that its change only adds an early "
                               "return (the function does nothing on that path).")
    details: RunDetails = Field(default_factory=RunDetails, description="How a fix or task run went (plan, "
                                "revisions, the verifier's verdict, the search's error or rival).")
