"""The search node: localize the fault, then try single-edit mutants before any model call.

Runs between baseline and plan in "fix" runs whose baseline has failing tests,
whatever goal the user typed (the goal reaches the model if the search finds
nothing). The step itself (localizing, the mutants, their verification) is
search/driver/single_edit.py; this node puts the ranking into the state as
`suspects` for the coder and, when a mutant passes every test, ends the run
`fixed` with no model call (a candidate the user reviews, like any fix);
otherwise the shadow is as it was and the run goes on to plan. A candidate
that would pass by swallowing the tests' errors (a `return` in a `finally:`,
an `__exit__` returning True, an added broad `except`: safety/swallows.py) is
refused before it is tried, and said so (the journal's `search_refused`, the
result's `refused`); one that only adds an early `return` is tried after the
others (search/driver/screen.py), and a fix made of one says so (finalize's
`caveat`). Nothing here can fail the run: a localization or search
that breaks is journaled and skipped.
"""

from __future__ import annotations

import time

from agent_core.events import TestReportEvent
from agent_core.models import FoundBy
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import tests_protected
from agent_core.pipeline.state import RunState, SuspectNote, stored
from agent_core.pipeline.timebudget import fills_extension, infill_deadline, search_budget
from agent_core.search import Mutant, Suspect, find_fix, is_infill, localize, unhung_duration


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
    check = None
    if deps.endpoint is not None:  # an unreachable model is said before the search (a second at most)
        check = await deps.endpoint.settled()
    unreachable = check is not None and check.problem and check.certain  # then no fill is asked of it
    deps.phase("testing", "localizing the failure", 5)
    started = time.monotonic()
    # Whatever the goal says, a fix run whose tests fail is searched; unless the goal asks to change the tests:
    # then they are not the specification, and making them pass by changing the code answers another question.
    searching = deps.settings.search.enabled and tests_protected(deps.request)
    budget = search_budget(deps, report)  # search.budget_s + 2 x the suite's time, less under a time budget
    # localizing counts against it; under a time budget a localization that will not search is bounded too
    deadline = started + budget if searching or deps.deadline is not None else None
    try:
        where = await localize(deps, report, deadline)
    except Exception as exc:  # noqa: BLE001 - localization is an aid: it never ends the run
        deps.journal.write("localize", suspects=[], evidence="none", error=f"{type(exc).__name__}: {exc}")
        return RunState(suspects=[])
    suspects, failing = where.suspects, where.failing
    suspects = [s for s in suspects if s.file not in deps.shadow.verification]  # a test pytest collects by config
    listed = [_note(s) for s in suspects]
    called = [f"{s.file}:{s.function}" for s in suspects if s.called]  # the model's holes go there early
    deps.journal.write("localize", suspects=listed, evidence=where.evidence, tests_covered=len(where.outcomes),
                       called=called,
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
    found = await find_fix(deps, report, where, deadline=deadline, suspects=suspects,
                           model=deps.llm if deps.settings.search.infill and not unreachable else None,
                           model_deadline=infill_deadline(deps, deadline),
                           model_extend=fills_extension(deps, unhung_duration(report)))
    if found.crash:
        deps.journal.write("search", error=found.crash)
    stats = found.stats.as_dict()
    if found.error.startswith("making candidates"):
        deps.journal.write("search", found=None, error=found.error)
        out["search_error"] = found.error
        return out
    if found.refused:  # candidates that would pass by swallowing the tests' errors (search/driver/screen.py)
        deps.journal.write("search_refused", candidates=found.refused)
        out["refused"] = found.refused[:5]
    if found.fix is None or found.report is None:
        deps.journal.write("search", found=None, **stats)
        if found.error:
            out["search_error"] = found.error
        return out
    deps.journal.write("search", found=_found(found.fix, found.before), **stats)
    if found.rival:  # another green edit: where it and the fix differ
        out["search_rival"] = found.rival
    deps.journal.write("test_report", report=found.report.model_dump(mode="json"))
    deps.hooks.emit(TestReportEvent(run_id=deps.run_id, report=found.report))
    by: FoundBy = "infill" if is_infill(found.fix) else "search"  # the model's fill of a hole, or the search's own edit
    out.update(RunState(status="fixed", found_by=by, report=stored(found.report)))
    return out
