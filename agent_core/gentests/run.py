"""`run_gen_tests`: analyse, write tests, settle them in the sandbox, compose the test file, report.

The workspace is never written: everything happens in a shadow copy that is
removed however the run ends (cancel included); the result's change set
creates or extends the test file, and its report lists the suspected bugs.
"""

from __future__ import annotations

import re
import time
from pathlib import Path
from typing import Any

from agent_core.agents.prompts import effective_prompts, instructed
from agent_core.agents.tester.agent import write_tests
from agent_core.agents.tester.prompt import TEMPLATE
from agent_core.analysis.symbols import analyse, test_files
from agent_core.events import Phase, PhaseEvent, RunHooks, TestReportEvent
from agent_core.gentests import coverage_record
from agent_core.gentests.deps import GenTestsDeps, resolve_deps
from agent_core.gentests.driver import run_driver
from agent_core.gentests.loop import Candidate, LoopContext, new_candidate, prune, settle
from agent_core.gentests.mutation_keep import MutationContext, apply_mutation_rule
from agent_core.gentests.report import bug_report, summary_text
from agent_core.gentests.targets import Target, TargetError, select_targets
from agent_core.gentests.testfile import compose, destination
from agent_core.llm.base import StructuredOutputError
from agent_core.llm.probe import EndpointWatch
from agent_core.models import (
    ChangeSet,
    Coverage,
    GeneratedTest,
    GenTestsSummary,
    MutationSummary,
    RunRequest,
    RunResult,
    SuspectedBug,
    TestReport,
)
from agent_core.settings import Settings
from agent_core.workspace.changeset import file_change


def _emit(hooks: RunHooks, run_id: str, phase: Phase, message: str, pct: int) -> None:
    hooks.emit(PhaseEvent(run_id=run_id, phase=phase, message=message, percentage=max(0, min(100, pct))))


def _template(settings: Settings, workspace: Path, journal: Any = None) -> str:
    template = TEMPLATE if "tester" not in settings.prompts else effective_prompts(settings, workspace)["tester"]
    return instructed({"tester": template}, workspace, journal)["tester"]


def _journal(deps: GenTestsDeps, type_: str, **fields: Any) -> None:
    if deps.journal is not None:
        deps.journal.write(type_, **fields)


def _baseline_files(root: Path, module: str) -> list[str]:
    """Existing test files that mention the module (they measure coverage before)."""
    word = re.compile(rf"\b{re.escape(module.rsplit('.', 1)[-1])}\b")
    out = []
    for path in test_files(root):
        try:
            if word.search(path.read_text(encoding="utf-8", errors="replace")):
                out.append(path.relative_to(root).as_posix())
        except OSError:
            continue
    return out


async def _coverage_of(deps: GenTestsDeps, root: Path, files: list[str], target: str, timeout: float,
                       phase: str) -> float:
    """Line coverage of `target` by `files`, journalled with coverage.py's HTML report (coverage_record.py)."""
    result = None
    if files:
        result = await run_driver(deps.sandbox, root, files, target, coverage=True, timeout_s=timeout,
                                  html=coverage_record.html_folder(phase))
    return coverage_record.record(deps.journal, phase, root, target, result)


# A second draw when the tester's answer does not have the expected form even after the client's repair
# request: the bundled model's first answer at its usual temperature sometimes leaves out "tests" altogether.
REDRAW_TEMPERATURE = 0.7


async def _generate(deps: GenTestsDeps, template: str, targets: list[Target], folder: str,
                    taken: set[str]) -> list[Candidate]:
    """The tester's tests for each target; a target whose answers never take the expected form is skipped
    (journaled), and only when every target's were is the run an error."""
    cands: list[Candidate] = []
    failure: StructuredOutputError | None = None
    for target in targets:
        try:
            tests = await write_tests(deps.llm, template, target.context)
        except StructuredOutputError:
            try:
                tests = await write_tests(deps.llm, template, target.context, temperature=REDRAW_TEMPERATURE)
            except StructuredOutputError as exc:
                failure = exc
                _journal(deps, "tool_call", tool="write_tests", args={"target": target.symbol.qualname},
                         result={"error": str(exc)}, ok=False)
                continue
        for test in tests:
            cands.append(new_candidate(len(cands) + 1, test, target, folder, taken))
    if failure is not None and not cands:
        raise failure
    return cands


async def run_gen_tests(request: RunRequest, settings: Settings, hooks: RunHooks, deps: Any = None,
                        endpoint: EndpointWatch | None = None) -> RunResult:
    """Generate tests for the request's targets; never raises for bad input (status 'error'). With `endpoint`
    (the start-of-run probe, llm/probe.py), a model that surely cannot be reached ends the run once the targets
    are found, before any test run (LLMUnavailable)."""
    run_id = request.run_id or getattr(deps, "run_id", None) or "gen-tests"
    started = time.monotonic()
    deps = resolve_deps(deps, settings, hooks, run_id)
    try:
        with deps.shadow_factory(Path(request.workspace), request.overlays) as shadow:
            try:
                result = await _run(request, settings, hooks, deps, shadow.root, run_id, endpoint)
            except TargetError as exc:
                result = RunResult(run_id=run_id, kind="gen_tests", status="error", error=str(exc),
                                   error_kind="bad_input")
    finally:  # an error the engine reports (an endpoint down) still counts the calls sent
        if hasattr(deps.journal, "note_usage"):
            deps.journal.note_usage(deps.llm.total_usage(), deps.llm.usage_by_role())
    result.usage = deps.llm.total_usage()
    result.usage_by_role = deps.llm.usage_by_role()
    result.duration_s = round(time.monotonic() - started, 3)
    return result


async def _run(request: RunRequest, settings: Settings, hooks: RunHooks, deps: GenTestsDeps, root: Path,
               run_id: str, endpoint: EndpointWatch | None = None) -> RunResult:
    _emit(hooks, run_id, "planning", "analysing the targets", 5)
    targets, _, module = select_targets(request, root)
    if endpoint is not None:  # no model, no tests: said now, not after the coverage run
        await endpoint.refuse_unreachable()
    target_file = request.target_file or ""
    dest = destination(root, target_file, module)
    existing_path = root / dest
    existing = existing_path.read_text(encoding="utf-8") if existing_path.is_file() else None
    baseline = _baseline_files(root, module)
    timeout = settings.sandbox.timeout_s
    before = await _coverage_of(deps, root, baseline, target_file, timeout, "before")
    _emit(hooks, run_id, "coding", f"writing tests for {', '.join(t.symbol.qualname for t in targets)}", 15)
    taken = {s.name for s in analyse(existing).symbols} if existing is not None else set()
    cands = await _generate(deps, _template(settings, root, deps.journal), targets, Path(dest).parent.as_posix(), taken)
    _journal(deps, "tool_call", tool="generate_tests", args={"targets": [t.symbol.qualname for t in targets]},
             result={"tests": [c.test.name for c in cands]}, ok=True)
    progress_n = [0]

    def progress(message: str) -> None:
        progress_n[0] += 1
        phase: Phase = "reflecting" if message.startswith("judging") else "testing"
        _emit(hooks, run_id, phase, message, 25 + min(60, progress_n[0] * 8))

    ctx = LoopContext(root=root, sandbox=deps.sandbox, llm=deps.llm, target_file=target_file,
                      max_iterations=settings.max_iterations, timeout_s=timeout, progress=progress,
                      baseline_files=baseline)
    await settle(ctx, cands)
    mutation = await _keep_rule(ctx, cands, settings, deps, module, targets, taken, Path(dest).parent.as_posix())
    kept = [c for c in cands if c.status in ("passing", "bug")]
    _emit(hooks, run_id, "finalizing", "writing the test file", 90)
    new_text = existing
    after = before
    if kept:  # a kept candidate has run, so it has its split
        tests = [(c.split, _marker(c) if c.status == "bug" else None) for c in kept if c.split is not None]
        new_text = compose(existing, tests, f"Tests of {module}, generated by agentls.")
        existing_path.parent.mkdir(parents=True, exist_ok=True)
        existing_path.write_text(new_text, encoding="utf-8")
        after = await _coverage_of(deps, root, sorted(set(baseline) | {dest}), target_file, timeout, "after")
    change = file_change(dest, existing, new_text) if kept else None
    report = bug_report([c for c in kept if c.status == "bug"], dest, new_text or "")
    if report.failures:
        hooks.emit(TestReportEvent(run_id=run_id, report=report))
    _journal(deps, "test_report", report=report.model_dump(mode="json"))
    found = _found(cands, report, before, after, mutation)
    return RunResult(run_id=run_id, kind="gen_tests", status="ok", iterations=ctx.rounds,
                     change_set=ChangeSet(changes=[change] if change else []), report=report,
                     summary=summary_text(found, dest), gen_tests=found)


async def _keep_rule(ctx: LoopContext, cands: list[Candidate], settings: Settings, deps: GenTestsDeps, module: str,
                     targets: list[Target], taken: set[str], folder: str) -> dict | None:
    """Flaky tests dropped, then the mutation rule (or, when it is off, the coverage rule); the mutation block."""
    if not settings.mutation.enabled:
        await prune(ctx, cands)
        return None
    coverage = await prune(ctx, cands, by_coverage=False)
    source = (ctx.root / ctx.target_file).read_text(encoding="utf-8", errors="replace")
    mctx = MutationContext(ctx, settings.mutation, source, module, targets, taken, folder,
                           lambda type_, **fields: _journal(deps, type_, **fields))
    block, extra = await apply_mutation_rule(mctx, cands, coverage)
    cands.extend(extra)
    return block


def _marker(cand: Candidate) -> str:
    message = cand.failure.message.splitlines()[0] if cand.failure and cand.failure.message else cand.reason
    return f"{cand.target.symbol.qualname}: {message}"


def _found(cands: list[Candidate], report: TestReport, before: float, after: float,
           mutation: dict[str, Any] | None) -> GenTestsSummary:
    kept = [c for c in cands if c.status in ("passing", "bug")]
    return GenTestsSummary(
        tests_written=len(cands),
        tests_kept=len(kept),
        tests_dropped=len(cands) - len(kept),
        suspected_bugs=[SuspectedBug(test=f.nodeid, file=f.source_file, line=f.source_line, message=f.message)
                        for f in report.failures],
        coverage=Coverage(before=before, after=after),
        dropped=[GeneratedTest(test=c.test.name, reason=c.reason) for c in cands if c.status == "dropped"],
        kept=[GeneratedTest(test=c.test.name, reason=c.reason) for c in kept],
        mutation=MutationSummary.model_validate(mutation) if mutation is not None else None,
    )
