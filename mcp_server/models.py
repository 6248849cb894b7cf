"""The tools' result shapes: pydantic models the SDK publishes as each tool's output schema.

These are the contract with MCP clients (structured content); `convert.py`
fills them from the engine's results. Field names are the wire names.
"""

from __future__ import annotations

from pydantic import BaseModel, Field


class TestCounts(BaseModel):
    """How many tests passed, failed and errored in one sandboxed run."""

    __test__ = False  # not a pytest class

    passed: int = Field(description="Tests that passed.")
    failed: int = Field(description="Tests whose assertion failed.")
    errors: int = Field(description="Tests that errored (setup, collection, a crash, a hang cut by the bound).")
    skipped: int = Field(default=0, description="Tests skipped or expected to fail.")


class Failure(BaseModel):
    """One failing or erroring test, located in the test file and in the code under test."""

    nodeid: str = Field(description="pytest node id, relative to the project.")
    kind: str = Field(description="'failure' (an assertion) or 'error'.")
    message: str = Field(description="The failure's message (first 2,000 characters).")
    file: str = Field(description="Test file, relative to the project.")
    line: int = Field(description="1-based line of the failing statement in the test file.")
    source_file: str | None = Field(default=None, description="Innermost project file under test in the traceback.")
    source_line: int | None = Field(default=None, description="1-based line in source_file.")


class TestOutcome(BaseModel):
    """One test's outcome."""

    __test__ = False

    nodeid: str = Field(description="pytest node id, relative to the project.")
    outcome: str = Field(description="passed, failed, error or skipped.")


class Environment(BaseModel):
    """Where the tests ran."""

    backend: str = Field(description="Sandbox backend: bubblewrap, docker or process.")
    interpreter: str = Field(description="The project's Python interpreter the tests ran with.")
    python_version: str = Field(description="Its version, e.g. '3.12'.")
    kind: str = Field(description="How it was found: setting, venv, uv, poetry, hatch, pdm or system.")


class RunTestsResult(BaseModel):
    """A sandboxed test run of the project as it is on disk."""

    ok: bool = Field(description="Every test passed (and at least one ran), within the limits.")
    run_id: str = Field(description="The run's id: its journal is the resource agentls://runs/{run_id}.")
    tests: TestCounts
    outcomes: list[TestOutcome] = Field(description="Every test's outcome, by node id.")
    failures: list[Failure]
    environment: Environment
    duration_s: float = Field(description="Wall-clock seconds of the test command.")
    timed_out: bool = Field(description="The run was killed at the sandbox's time limit.")
    limit_hit: str | None = Field(default=None, description="Which sandbox limit ended the run, if any.")
    output_tail: str = Field(description="The last lines of the test command's output.")


class OutcomeChange(BaseModel):
    """A test whose outcome the patch changed."""

    nodeid: str
    before: str = Field(description="Outcome at the baseline ('absent' when it was not collected).")
    after: str = Field(description="Outcome with the patch ('absent' when it is no longer collected).")


class VerifyPatchResult(BaseModel):
    """The verdict on a unified diff, run on a shadow copy against the project's own tests."""

    verified: bool = Field(description="The patched suite passes, nothing that passed broke, every failing test "
                           "now passes, and nothing that judges the run was touched.")
    refused: str | None = Field(description="Why the patch was not run, or why its run cannot count.")
    tests: TestCounts | None = Field(description="Counts of the patched run (null when refused before running).")
    failures: list[Failure] = Field(description="Failing tests of the patched run.")
    changed_outcomes: list[OutcomeChange] = Field(description="Tests whose outcome differs from the baseline.")
    applied: bool = Field(description="The diff was written to the project (apply: true, and verified).")
    files: list[str] = Field(description="Project-relative paths the diff touches.")
    baseline: TestCounts | None = Field(default=None, description="Counts of the unpatched run.")
    apply_error: str | None = Field(default=None, description="Why a verified diff could not be written.")


class Suspect(BaseModel):
    """A suspicious function (module-level code when `function` is '') and its most suspicious lines."""

    file: str
    function: str
    start_line: int
    end_line: int
    lines: list[int] = Field(description="1-based lines, most suspicious first.")
    score: float = Field(description="Suspiciousness, 0-1 (Ochiai on per-test coverage, traceback boosts).")


class LocalizeResult(BaseModel):
    """Where the failing tests' fault most likely is."""

    tests: TestCounts
    failing: list[str] = Field(description="Node ids of the failing tests the ranking explains.")
    evidence: str | None = Field(description="'coverage' (per-test coverage spectrum) or 'traceback'; null when "
                                 "every test passed.")
    suspects: list[Suspect]


class QuickFixResult(BaseModel):
    """The zero-token search's verified single-edit fix, or none."""

    found: bool
    diff: str | None = Field(description="Unified diff of the verified fix (apply with verify_patch apply: true).")
    change: str | None = Field(description="The edit in words, e.g. '`a + c` -> `a + b`'.")
    file: str | None = None
    line: int | None = None
    tests: TestCounts = Field(description="Counts of the run with the fix (every test passes), or of the baseline "
                              "when none was found.")
    baseline: TestCounts | None = Field(default=None, description="Counts of the unfixed run, when a fix was found.")
    reason: str = Field(description="Why there is no fix ('the tests pass', 'no single edit passes them').")


class PipelineResult(BaseModel):
    """The end of a fix or gen-tests run of the full pipeline (the workspace is not written)."""

    run_id: str = Field(description="Its journal is the resource agentls://runs/{run_id}.")
    status: str = Field(description="fixed, unfixed, ok, failed, error or cancelled.")
    diff: str = Field(description="Unified diff of the verified change ('' when none).")
    files: list[str]
    tests: TestCounts | None
    failures: list[Failure]
    summary: str
    explanation: str
    error: str | None
    iterations: int
    llm_calls: int
    tokens: int
    duration_s: float
