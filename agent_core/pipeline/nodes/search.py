"""The search node: localize the fault, then try single-edit mutants before any model call.

Runs between baseline and plan in "fix" runs whose baseline has failing tests,
whatever goal the user typed (the goal reaches the model if the search finds
nothing). The step itself (localizing, the mutants, their verification) is
agent_core/search/step.py; this node puts the ranking into the state as
`suspects` for the coder and, when a mutant passes every test, ends the run
`fixed` with no model call (a candidate the user reviews, like any fix);
otherwise the shadow is as it was and the run goes on to plan. Nothing here
can fail the run: a localization or search that breaks is journaled and
skipped.
"""

from __future__ import annotations

import time

from agent_core.events import TestReportEvent
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import tests_protected
from agent_core.pipeline.state import RunState, SuspectNote, stored
from agent_core.pipeline.timebudget import search_budget
from agent_core.search.cases import failing_inputs
from agent_core.search.differ import rival_sentence
from agent_core.search.hangs import unhung_duration
from agent_core.search.localize import Suspect
from agent_core.search.mutants import Mutant
from agent_core.search.pairs import SECOND_EDITS, from_partial_fix
from agent_core.search.step import candidates, find_single_edit, localize_failure
from agent_core.search.templates import seen_exceptions
from agent_core.workspace.shadow import read_exact


def _note(suspect: Suspect) -> SuspectNote:
    """A suspect as the state and the journal keep it (`Suspect.as_dict`'s fields)."""
    return SuspectNote(file=suspect.file, function=suspect.function, start_line=suspect.start_line,
                       end_line=suspect.end_line, lines=list(suspect.lines), score=suspect.score)


def _found(mutant: Mutant, before: str) -> dict[str, str | int]:
    return {
        "file": mutant.path,
        "line": mutant.line,
        "description": mutant.description,
        "before": before,
        "after": mutant.text,
    }


async def search(state: RunState, deps: RunDeps) -> RunState:
    """Localize, then look for a single-edit fix; `suspects` always, `status: fixed` when a mutant passes all."""
    report = state.get("baseline")
    if state.get("kind") != "fix" or report is None or report.ok:
        return RunState()
    if deps.endpoint is not None:  # an unreachable model is said before the search (a second at most)
        await deps.endpoint.settled()
    deps.phase("testing", "localizing the failure", 5)
    started = time.monotonic()
    # Whatever the goal says, a fix run whose tests fail is searched; unless the goal asks to change the tests:
    # then they are not the specification, and making them pass by changing the code answers another question.
    searching = deps.settings.search.enabled and tests_protected(deps.request)
    budget = search_budget(deps)  # search.budget_s, or less under the run's time budget (timebudget.py)
    # localizing counts against it; under a time budget a localization that will not search is bounded too
    deadline = started + budget if searching or deps.deadline is not None else None
    try:
        where = await localize_failure(deps, report, deadline)
    except Exception as exc:  # noqa: BLE001 - localization is an aid: it never ends the run
        deps.journal.write("localize", suspects=[], evidence="none", error=f"{type(exc).__name__}: {exc}")
        return RunState(suspects=[])
    suspects, failing = where.suspects, where.failing
    suspects = [s for s in suspects if s.file not in deps.shadow.verification]  # a test pytest collects by config
    listed = [_note(s) for s in suspects]
    deps.journal.write("localize", suspects=listed, evidence=where.evidence, tests_covered=len(where.outcomes),
                       recorder=where.recorder, localize_s=round(time.monotonic() - started, 3),
                       budget_s=round(budget, 3),
                       **({"error": where.error} if where.error else {}))
    out = RunState(suspects=listed)
    if where.error:
        out["search_error"] = f"localizing: {where.error}"
    if not searching or not suspects or not failing:
        if searching:  # said in the journal: a search that tried nothing is not a search that found nothing
            why = "no failing test to search against" if suspects else "no suspicious line in the workspace's code"
            deps.journal.write("search", found=None, tried=0, skipped=why)
        return out  # a typed goal still reaches the model after a search that found nothing
    inputs = failing_inputs(report, deps.shadow.root)
    try:
        mutants = candidates(deps.shadow.root, suspects, deps.settings.search.max_mutants, seen_exceptions(report),
                             inputs)
    except Exception as exc:  # noqa: BLE001 - a template that cannot read some code must not end the run
        deps.journal.write("search", found=None, error=f"making candidates: {type(exc).__name__}: {exc}")
        out["search_error"] = f"making candidates: {type(exc).__name__}: {exc}"
        return out
    deps.phase("testing", f"trying single-edit fixes of the suspicious lines: 0/{len(mutants)} tried", 6)
    originals = {m.path: read_exact(deps.shadow.root / m.path) for m in mutants}
    try:
        winner, passed, stats = await find_single_edit(deps, failing, mutants, where, unhung_duration(report),
                                                       report, deadline)
    except Exception as exc:  # noqa: BLE001 - the search is an aid too
        deps.journal.write("search", error=f"{type(exc).__name__}: {exc}")
        winner, passed, stats = None, None, {}
    if (winner is None or passed is None) and deadline is not None and not stats.get("error"):
        winner, passed, pairs = await from_partial_fix(  # two edits, from a partial fix (search/pairs.py)
            deps, failing, mutants, (lambda m: where.covering(m.path, m.line)) if where.files else None, deadline,
            lambda: candidates(deps.shadow.root, suspects, SECOND_EDITS, seen_exceptions(report), inputs),
            lambda more: find_single_edit(deps, failing, more, where, unhung_duration(report), report, deadline,
                                          rivals=False))  # a second edit's rival would not be shown
        stats.update(pairs)
    if winner is None or passed is None:
        deps.journal.write("search", found=None, **stats)
        if stats.get("error"):
            out["search_error"] = f"trying mutants: {stats['error']}"
        return out
    before = "\n".join(originals[winner.path].split("\n")[winner.line - 1 : winner.last])
    deps.journal.write("search", found=_found(winner, before), **stats)
    if rival := rival_sentence(stats.get("rival")):  # another green edit: where it and the fix differ
        out["search_rival"] = rival
    deps.journal.write("test_report", report=passed.model_dump(mode="json"))
    deps.hooks.emit(TestReportEvent(run_id=deps.run_id, report=passed))
    out.update(RunState(status="fixed", found_by="search", report=stored(passed)))
    return out
