"""The keep/repair/drop loop: run every candidate test in the sandbox and settle its fate.

Per round, all pending candidates (each in its own file beside the final test
file) run in one sandboxed pytest. A test-side error goes back to the model
with its error (at most `max_iterations` repairs), a failing test is judged
(docstring check first, then the model's verdict): a suspected bug is kept, a
wrong test is repaired or dropped. Survivors are then re-run (3 runs in all:
flaky ones are dropped) under coverage, and passing tests adding no line or
branch of the target module are dropped.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from agent_core.agents.tester.agent import judge_failure, repair_test
from agent_core.agents.tester.schema import GeneratedTest
from agent_core.gentests.driver import CoverageData, PytestRun, run_driver
from agent_core.gentests.judge import (
    classify,
    docstring_check,
    failure_summary,
    generator_body_ran,
    repair_hint,
)
from agent_core.gentests.targets import Target
from agent_core.gentests.testfile import BadTestCode, SplitTest, candidate_text, split_code
from agent_core.llm.base import LLMClient
from agent_core.models import TestFailure
from agent_core.sandbox.base import Sandbox

Progress = Callable[[str], None]


@dataclass
class Candidate:
    """One generated test on its way to being kept or dropped."""

    index: int
    test: GeneratedTest
    target: Target
    folder: str  # workspace-relative folder of the final test file
    split: SplitTest | None = None
    problem: str = ""  # why it cannot run yet (static error or last failure)
    status: str = "pending"  # pending | passing | bug | dropped
    repairs: int = 0
    failure: TestFailure | None = None
    bug_file: str | None = None
    bug_line: int | None = None
    reason: str = ""

    @property
    def file(self) -> str:
        return str(PurePosixPath(self.folder) / f"test_agentls_candidate_{self.index}.py")

    @property
    def context(self) -> str:
        return f"test_agentls_candidate_{self.index}.{self.test.name}"

    def prepare(self) -> None:
        try:
            context = self.target.context
            self.split, self.problem = split_code(self.test.code, self.test.name, context.import_line,
                                                  context.imports), ""
        except BadTestCode as exc:
            self.split, self.problem = None, str(exc)


def new_candidate(index: int, test: GeneratedTest, target: Target, folder: str, taken: set[str]) -> Candidate:
    """A candidate whose test name clashes with none in `taken` (renamed `name_2`, ... if needed); `taken` grows."""
    name, n = test.name, 2
    while name in taken:
        name, n = f"{test.name}_{n}", n + 1
    if name != test.name:
        test = test.model_copy(update={"name": name, "code": re.sub(
            rf"\bdef {re.escape(test.name)}\b", f"def {name}", test.code)})
    taken.add(name)
    return Candidate(index=index, test=test, target=target, folder=folder)


@dataclass
class LoopContext:
    root: Path
    sandbox: Sandbox
    llm: LLMClient
    target_file: str
    max_iterations: int
    timeout_s: float
    progress: Progress
    baseline_files: list[str] = field(default_factory=list)  # existing tests of the module
    rounds: int = 0


def write_candidates(ctx: LoopContext, cands: list[Candidate]) -> None:
    for cand in cands:
        if cand.split is None:  # never: only runnable candidates (split) are written
            continue
        path = ctx.root / cand.file
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(candidate_text(cand.split), encoding="utf-8")


def remove_candidates(ctx: LoopContext, cands: list[Candidate]) -> None:
    for cand in cands:
        (ctx.root / cand.file).unlink(missing_ok=True)


def _result_of(cand: Candidate, run: PytestRun) -> tuple[str, TestFailure | None, str | None]:
    nodeid = f"{cand.file}::{cand.test.name}"
    collect = run.collect_errors.get(cand.file)
    failure = next((f for f in run.failures if f.file == cand.file), None)
    return run.outcomes.get(nodeid, "missing"), failure, collect


async def _judge(ctx: LoopContext, cand: Candidate, failure: TestFailure, run: PytestRun) -> None:
    if cand.split is not None and failure.file == cand.file:  # the failure's line is in the file that ran
        verdict = docstring_check(cand.target.context.docstring, candidate_text(cand.split), failure.line)
    else:
        verdict = docstring_check(cand.target.context.docstring, cand.test.code)
    reason = "the docstring's example agrees with the test" if verdict == "code_bug" else ""
    if verdict is None:
        answer = await judge_failure(ctx.llm, cand.target.context, cand.test, failure_summary(failure))
        verdict, reason = answer.verdict, answer.reason
    if verdict == "code_bug":
        cand.status, cand.failure, cand.reason = "bug", failure, reason or failure.message
        if failure.source_file and failure.source_line:
            cand.bug_file, cand.bug_line = failure.source_file, failure.source_line
        else:
            cand.bug_file = ctx.target_file
            cand.bug_line = run.last_lines.get(f"{cand.file}::{cand.test.name}") or cand.target.symbol.start_line
    else:
        cand.problem = f"the test fails and looks wrong ({reason}):\n{failure_summary(failure)}"


async def _repair_or_drop(ctx: LoopContext, cand: Candidate) -> None:
    if cand.repairs >= ctx.max_iterations:
        cand.status, cand.reason = "dropped", f"never ran correctly: {cand.problem.splitlines()[0][:200]}"
        return
    cand.repairs += 1
    fixed = await repair_test(ctx.llm, cand.target.context, cand.test, cand.problem)
    if fixed is None:
        cand.status, cand.reason = "dropped", "the model gave no repair"
        return
    cand.test = fixed.model_copy(update={"name": fixed.name if fixed.name.startswith("test") else cand.test.name})
    cand.prepare()


async def settle(ctx: LoopContext, cands: list[Candidate]) -> None:
    """Run, repair and judge until every candidate is passing, a suspected bug, or dropped."""
    for cand in cands:
        cand.prepare()
    while any(c.status == "pending" for c in cands):
        ctx.rounds += 1
        runnable = [c for c in cands if c.status == "pending" and c.split is not None]
        if runnable:
            ctx.progress(f"running {len(runnable)} test(s), round {ctx.rounds}")
            write_candidates(ctx, runnable)
            result = await run_driver(ctx.sandbox, ctx.root, [c.file for c in runnable], ctx.target_file,
                                      timeout_s=ctx.timeout_s)
            remove_candidates(ctx, runnable)
            run = result.runs[0] if result.runs else None
            for cand in runnable:
                await _evaluate(ctx, cand, run, result.output)
        for cand in [c for c in cands if c.status == "pending"]:
            await _repair_or_drop(ctx, cand)


async def _evaluate(ctx: LoopContext, cand: Candidate, run: PytestRun | None, output: str) -> None:
    if run is None:
        cand.problem = f"pytest did not run:\n{output[-1500:]}"
        return
    outcome, failure, collect = _result_of(cand, run)
    if outcome == "passed":
        cand.status = "passing"
        return
    last = run.last_lines.get(f"{cand.file}::{cand.test.name}")  # where the target file last returned
    ran_target = generator_body_ran(cand.target.symbol.source, cand.target.symbol.start_line, last)
    kind = classify(failure, collect, ran_target) if outcome in ("failed", "error", "missing") else "test_error"
    if kind == "test_error" or failure is None:
        detail = collect or (failure_summary(failure) if failure else f"the test did not run ({outcome})")
        cand.problem = "\n".join(p for p in (detail[-1500:], repair_hint(failure, ran_target)) if p)
        return
    ctx.progress(f"judging the failure of {cand.test.name}")
    await _judge(ctx, cand, failure, run)


async def prune(ctx: LoopContext, cands: list[Candidate], by_coverage: bool = True) -> CoverageData | None:
    """Drop flaky passing tests (3 runs in all) and, when `by_coverage`, passing tests adding no coverage (mutation
    testing judges them otherwise); return the coverage data of the existing tests and the passing candidates."""
    passing = [c for c in cands if c.status == "passing"]
    if not passing:
        return None
    ctx.progress(f"checking {len(passing)} passing test(s) for flakiness and coverage")
    write_candidates(ctx, passing)
    result = await run_driver(ctx.sandbox, ctx.root, ctx.baseline_files + [c.file for c in passing],
                              ctx.target_file, repeat=2, coverage=True, timeout_s=ctx.timeout_s)
    remove_candidates(ctx, passing)
    for cand in passing:
        outcomes = [r.outcomes.get(f"{cand.file}::{cand.test.name}") for r in result.runs]
        if len(outcomes) < 2 or any(o != "passed" for o in outcomes):
            cand.status, cand.reason = "dropped", "flaky: did not pass in all 3 runs"
    coverage = result.runs[0].coverage if result.runs else None
    if coverage is not None and by_coverage:
        drop_redundant(coverage, [c for c in passing if c.status == "passing"])
    return coverage


def drop_redundant(coverage: CoverageData, passing: list[Candidate]) -> None:
    """The coverage keep rule: drop each passing test that adds no line or branch to what came before it."""
    own = {c.context for c in passing}
    seen: set[tuple] = set()
    for context in coverage.contexts:
        if context and context not in own:  # existing tests (the import-time "" context excluded)
            seen |= coverage.contribution(context)
    for cand in passing:
        adds = coverage.contribution(cand.context) - seen
        if not adds:
            cand.status, cand.reason = "dropped", "adds no line or branch coverage"
        seen |= adds

