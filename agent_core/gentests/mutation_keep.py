"""The mutation keep rule of gen-tests, and the follow-up call for the mutants no test notices.

After the keep/repair/drop loop, the targets' mutants run against the tests
that were there before and the passing candidates (one sandbox process). In
candidate order, a test is kept when it kills a mutant that the earlier tests
(the existing ones and the candidates kept before it) leave alive, or when it
covers a line where no mutant applies; the others are dropped with that
reason. When `mutation.followup` is on and mutants survive, the tester is
asked once more, shown the survivors; its tests go through the same loop and
are kept only if they kill a survivor. Without mutants (or without an
answer from the driver) the coverage rule decides, as before.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from agent_core.agents.tester.mutants import write_killing_tests
from agent_core.gentests.driver import CoverageData
from agent_core.gentests.loop import (
    Candidate,
    LoopContext,
    drop_redundant,
    new_candidate,
    prune,
    remove_candidates,
    settle,
    write_candidates,
)
from agent_core.gentests.mutation import (
    MutationRun,
    block,
    covered_lines,
    run_mutants,
    select_mutants,
    statement_lines,
    survivor_text,
)
from agent_core.gentests.targets import Target
from agent_core.llm.base import LLMError
from agent_core.settings import MutationSettings

# Surviving mutants shown to the model in the follow-up call. The bundled 1.5B model writes one test per
# change shown; eight made answers that outlasted the answer cap on a loaded machine. Every survivor is still
# run against the answer's tests, and a test that kills one shown mutant often kills its line's others.
MAX_SHOWN = 4


@dataclass
class MutationContext:
    loop: LoopContext
    settings: MutationSettings
    source: str  # the target file's text
    module: str  # its import path
    targets: list[Target]
    taken: set[str]  # test names in use (the existing file's and the candidates')
    folder: str  # workspace-relative folder of the final test file
    journal: Callable[..., None]  # (type_, **fields) -> None


def _owner(nodeid: str, cands: list[Candidate]) -> Candidate | None:
    return next((c for c in cands if nodeid.startswith(f"{c.file}::")), None)


def _kills(run: MutationRun, cand: Candidate) -> set[int]:
    return {i for i, o in enumerate(run.outcomes) if any(t.startswith(f"{cand.file}::") for t in o.killers)}


def _lines(coverage: CoverageData | None, context: str) -> set[int]:
    data = coverage.contexts.get(context) if coverage else None
    return set(data["lines"]) if data else set()


def _judge(run: MutationRun, passing: list[Candidate], killed: set[int], coverage: CoverageData | None,
           seen: set[int]) -> None:
    """Greedy in candidate order: keep a test for a new kill or for coverage where no mutant applies."""
    mutated = run.mutated_lines()
    for cand in passing:
        new = _kills(run, cand) - killed
        if new:
            first = run.outcomes[min(new)].mutant
            cand.reason = (f"kills {len(new)} mutant(s) the earlier tests miss, e.g. line {first.line}: "
                           f"{first.description}")
            killed |= new
        elif added := (_lines(coverage, cand.context) - seen - mutated):
            cand.reason = f"covers line(s) {', '.join(map(str, sorted(added)[:5]))}, where no mutant applies"
        else:
            cand.status, cand.reason = "dropped", "kills no mutant that the earlier tests leave alive"
        if cand.status == "passing":
            seen |= _lines(coverage, cand.context)


async def _run(mctx: MutationContext, files: list[str], mutants: list, covered: set[int] | None,
               cands: list[Candidate]) -> MutationRun | None:
    ctx = mctx.loop
    write_candidates(ctx, cands)
    try:
        return await run_mutants(ctx.sandbox, ctx.root, files, mutants, mctx.source, covered=covered,
                                 mutant_timeout_s=mctx.settings.mutant_timeout_s, budget_s=mctx.settings.budget_s)
    finally:
        remove_candidates(ctx, cands)


async def apply_mutation_rule(mctx: MutationContext, cands: list[Candidate], coverage: CoverageData | None
                              ) -> tuple[dict[str, Any] | None, list[Candidate]]:
    """Judge the passing candidates by mutants; the `mutation` block (None: coverage rule used) and the
    follow-up candidates (already judged)."""
    ctx = mctx.loop
    passing = [c for c in cands if c.status == "passing"]
    spans = [(t.symbol.start_line, t.symbol.end_line) for t in mctx.targets]
    mutants = select_mutants(ctx.target_file, mctx.source, statement_lines(mctx.source, spans),
                             mctx.settings.max_mutants)
    ctx.progress(f"running {len(mutants)} mutant(s) of the targets against the tests")
    run = await _run(mctx, ctx.baseline_files + [c.file for c in passing], mutants, covered_lines(coverage), passing)
    if run is None or not run.outcomes:
        if coverage is not None:
            drop_redundant(coverage, passing)
        mctx.journal("tool_call", tool="mutation_testing", args={"mutants": len(mutants)},
                     result={"fallback": "coverage rule"}, ok=run is not None)
        return None, []
    before = {i for i, o in enumerate(run.outcomes) if any(_owner(t, passing) is None for t in o.killers)}
    killed = set(before)
    seen = {line for context, data in (coverage.contexts.items() if coverage else [])
            if _owner_context(context, passing) is None for line in data["lines"]}
    _judge(run, passing, killed, coverage, seen)
    extra: list[Candidate] = []
    if mctx.settings.followup and len(killed) < len(run.outcomes):
        extra = await _follow_up(mctx, run, killed, len(cands))
    result = block(ctx.target_file, run, before, killed)
    mctx.journal("tool_call", tool="mutation_testing", args={"mutants": len(mutants)}, ok=True, result={
        **{k: v for k, v in result.items() if k != "survivors"},
        "tests": [{"test": c.test.name, "status": c.status, "reason": c.reason}
                  for c in passing + extra if c.status != "bug"]})
    return result, extra


def _owner_context(context: str, cands: list[Candidate]) -> Candidate | None:
    return next((c for c in cands if c.context == context), None)


def _follow_up_source(mctx: MutationContext, lines: list[int]) -> tuple[list[Target], str, str]:
    owners = [t for t in mctx.targets if any(t.symbol.start_line <= n <= t.symbol.end_line for n in lines)]
    owners = owners or mctx.targets[:1]
    names = sorted({t.context.import_line.rsplit(" import ", 1)[-1] for t in owners})
    import_line = f"from {mctx.module} import {', '.join(names)}"
    return owners, import_line, "\n\n".join(t.symbol.source for t in owners)


def _spread(run: MutationRun, alive: list[int]) -> list[int]:
    """Up to MAX_SHOWN survivors, one per line first (in line order), then the lines' others."""
    first: dict[int, int] = {}  # line -> its first survivor
    for i in alive:
        first.setdefault(run.outcomes[i].mutant.line, i)
    rest = [i for i in alive if i not in first.values()]
    return sorted([*first.values(), *rest][:MAX_SHOWN])


async def _follow_up(mctx: MutationContext, run: MutationRun, killed: set[int], count: int) -> list[Candidate]:
    """One more tester call shown the survivors; its tests are kept only when they kill one."""
    ctx = mctx.loop
    alive = [i for i in range(len(run.outcomes)) if i not in killed]
    shown = [run.outcomes[i] for i in _spread(run, alive)]
    owners, import_line, source = _follow_up_source(mctx, [o.mutant.line for o in shown])
    ctx.progress(f"asking for tests that notice {len(shown)} surviving mutant(s)")
    try:
        tests = await write_killing_tests(ctx.llm, mctx.module, import_line, source,
                                          [survivor_text(o.mutant, mctx.source, o.ran) for o in shown])
    except LLMError as exc:  # an optional extra: the tests kept so far stand without it
        mctx.journal("tool_call", tool="mutation_follow_up", args={"shown": len(shown)}, result=str(exc), ok=False)
        return []
    new = [new_candidate(count + k + 1, test, next((t for t in owners if t.symbol.qualname == test.target), owners[0]),
                         mctx.folder, mctx.taken) for k, test in enumerate(tests)]
    await settle(ctx, new)
    coverage = await prune(ctx, new, by_coverage=False)
    passing = [c for c in new if c.status == "passing"]
    if not passing:
        return new
    survivors = [run.outcomes[i].mutant for i in alive]
    second = await _run(mctx, [c.file for c in passing], survivors, covered_lines(coverage), passing)
    if second is None:
        for cand in passing:
            cand.status, cand.reason = "dropped", "its mutants could not be run"
        return new
    index = {id(run.outcomes[i].mutant): i for i in alive}
    for cand in passing:
        hits = {index[id(second.outcomes[j].mutant)] for j in _kills(second, cand)} - killed
        if hits:
            first = run.outcomes[min(hits)].mutant
            cand.reason = f"kills {len(hits)} surviving mutant(s), e.g. line {first.line}: {first.description}"
            killed |= hits
        else:
            cand.status, cand.reason = "dropped", "kills none of the surviving mutants it was asked for"
    return new
