"""Two edits: when no single candidate passes, a search for a second edit from a partial fix.

A bug behind several failing tests often needs two changes (a bound and an
index, a guard and a default); one of them alone makes some of the failing
tests pass and breaks none of the passing ones. After the single-edit search
finds nothing, and only with two or more failing tests and budget left:

1. the first PARTIAL_CANDIDATES one-line candidates (in the search's order) run
   against each failing test on its own (with the passing tests that cover
   their line, when coverage says which): the ones that pass some but not all
   of the failing tests, and no covering test fails, are partial fixes;
2. from the best (most failing tests passed, then the search's order; at most
   MAX_PARTIALS, with those the search's own driver runs found when its first
   150 candidates ran every failing test, driver/partials.py, after these), the
   partial fix is written into the shadow and the search
   runs again on the same file (at most SECOND_EDITS candidates): a second
   edit that makes the whole suite pass is the fix, both edits together.

Everything within the search's deadline; the shadow is restored exactly when
nothing is found.
"""

from __future__ import annotations

import time
from collections.abc import Awaitable, Callable
from typing import Any

from agent_core.models import TestReport
from agent_core.search.candidate import Mutant
from agent_core.search.driver.sandboxed import try_mutants
from agent_core.workspace.shadow import read_exact, write_exact

PARTIAL_CANDIDATES = 60  # first-stage candidates tried on each failing test alone
MAX_FAILING = 4  # failing tests tried one by one (more: the first four)
MAX_PARTIALS = 2  # partial fixes a second edit is searched from
SECOND_EDITS = 300  # candidates of the second search

Found = tuple[Mutant | None, TestReport | None, dict]


async def partial_fixes(deps: Any, failing: list[str], mutants: list[Mutant], covering: Callable | None,
                        deadline: float) -> list[Mutant]:
    """The candidates among the first PARTIAL_CANDIDATES one-line ones that pass some, not all, of `failing`."""
    firsts = [m for m in mutants if m.last == m.line and "\n" not in m.text][:PARTIAL_CANDIDATES]
    tests = failing[:MAX_FAILING]
    passes: dict[int, int] = {}
    for test in tests:
        left = deadline - time.monotonic()
        if left <= 0 or not firsts:
            return []
        results, _ = await try_mutants(deps.sandbox, deps.shadow.root, [test], firsts,
                                       mutant_timeout_s=deps.settings.search.mutant_timeout_s, budget_s=left,
                                       max_passing=len(firsts), covering=covering, hot=True)
        for mutant, outcome in results:
            if outcome == "passed":
                passes[id(mutant)] = passes.get(id(mutant), 0) + 1
    partial = [m for m in firsts if 0 < passes.get(id(m), 0) < len(tests) or len(failing) > len(tests)
               and passes.get(id(m), 0)]
    partial.sort(key=lambda m: -passes[id(m)])  # stable: the search's order among equals
    return partial[:MAX_PARTIALS]


def combined(first: Mutant, second: Mutant, original: str, final: str, joined: str = "then") -> Mutant:
    """One candidate for both edits of a file: the original lines from the first edited to the last, replaced by
    what they became (the journal, the trace and the change set show the two as one change); its description
    `two edits: A; {joined} B`."""
    lo, hi = min(first.line, second.line), max(first.last, second.last)
    shift = len(final.split("\n")) - len(original.split("\n"))
    text = "\n".join(final.split("\n")[lo - 1 : hi + shift])
    description = f"two edits: {first.description}; {joined} {second.description}"
    return Mutant(first.path, lo, text, description, max(first.tier, second.tier), hi,
                  first.concerns + second.concerns)


async def from_partial_fix(
    deps: Any, failing: list[str], mutants: list[Mutant], covering: Callable | None, deadline: float,
    regenerate: Callable[[], list[Mutant]], search: Callable[[list[Mutant]], Awaitable[Found]],
    seeds: list[Mutant] | None = None,
) -> Found:
    """A fix in two edits, or (None, None, figures). `regenerate` makes the search's candidates from the shadow as
    it is; `search` runs the single-edit search on candidates (and keeps the winner in the shadow). `seeds`: partial
    fixes the search's own driver runs already found (driver/partials.py), best first, taken after this step's own
    up to MAX_PARTIALS. Like the rest of the search, it never fails the run: what breaks is in the figures
    (`pair_error`)."""
    try:
        return await _from_partial_fix(deps, failing, mutants, covering, deadline, regenerate, search, seeds or [])
    except Exception as exc:  # noqa: BLE001 - the search is an aid
        return None, None, {"pair_error": f"{type(exc).__name__}: {exc}"}


async def _from_partial_fix(
    deps: Any, failing: list[str], mutants: list[Mutant], covering: Callable | None, deadline: float,
    regenerate: Callable[[], list[Mutant]], search: Callable[[list[Mutant]], Awaitable[Found]], seeds: list[Mutant],
) -> Found:
    stats: dict[str, Any] = {"partial_fixes": 0}
    if len(failing) < 2 or deadline - time.monotonic() <= 0:
        return None, None, stats
    partial = await partial_fixes(deps, failing, mutants, covering, deadline)
    seen = {(m.path, m.line, m.last, m.text) for m in partial}
    partial += [m for m in seeds if (m.path, m.line, m.last, m.text) not in seen][: MAX_PARTIALS - len(partial)]
    stats["partial_fixes"] = len(partial)
    shadow = deps.shadow
    for first in partial:
        if deadline - time.monotonic() <= 0:
            break
        known = first.path in shadow.originals
        shadow.remember(first.path)
        before = read_exact(shadow.root / first.path)
        write_exact(shadow.root / first.path, first.applied(before))
        found = None
        try:
            seconds = [m for m in regenerate() if m.path == first.path and not m.line <= first.line <= m.last]
            found = await search(seconds[:SECOND_EDITS])
        finally:
            if found is None or found[0] is None:
                write_exact(shadow.root / first.path, before)
                if not known:
                    shadow.originals.pop(first.path, None)
        second, report, more = found
        stats.setdefault("second_tried", 0)
        stats["second_tried"] += more.get("tried", 0)
        if second is not None and report is not None:
            both = combined(first, second, before, read_exact(shadow.root / first.path))
            return both, report, {**stats, "first": first.description, "second": second.description}
    return None, None, stats
