"""The search's front door: `localize` a failure, then `find_fix` a verified fix among the candidates.

`find_fix` makes the candidates of the suspicious lines (the one-line catalogue, the templates placed among
them by driver/ranking.py, then any extra `CandidateSource`'s), tries them against the failing tests in the
sandbox, verifies a passing one on the whole suite, and, when no single edit does, a fix in two edits (a
partial fix and a second edit). It returns a `SearchOutcome` with typed `SearchStats`; callers (the
pipeline's search node, the editor's background quick fix, the `diagnose` check) only adapt it.

An extra candidate source is an async callable given the suspects (a model proposing edits of the most
suspicious lines is one): each is awaited once after the built-in candidates are made, and its mutants are
tried after them in the order it returns them. Ranking such candidates among the templates is the source's
own business: it returns them ranked, and the list is not reordered.
"""

from __future__ import annotations

from collections.abc import Awaitable, Sequence
from dataclasses import asdict, dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent_core.models import TestReport
from agent_core.sandbox.base import Sandbox
from agent_core.search.candidate import Mutant
from agent_core.search.driver.distinguish import rival_sentence
from agent_core.search.driver.localizing import Localization, SearchDeps, localize_failure
from agent_core.search.driver.pairs import SECOND_EDITS, from_partial_fix
from agent_core.search.driver.single_edit import candidates, find_single_edit
from agent_core.search.evidence.hangs import unhung_duration
from agent_core.search.evidence.inputs import FailingInputs, failing_inputs, seen_exceptions
from agent_core.search.evidence.spectrum import Suspect
from agent_core.settings import Settings
from agent_core.workspace.shadow import ShadowWorkspace, read_exact


@dataclass
class Collaborators:
    """What localizing and searching need of a run (`SearchDeps`), for a caller that has no run of its own."""

    settings: Settings
    sandbox: Sandbox
    shadow: ShadowWorkspace
    run_tests: Any  # async (sandbox, workspace, test_command, timeout_s, ...) -> TestReport


class CandidateSource(Protocol):
    """An extra, asynchronous source of candidates: mutants of the suspects' lines, best first."""

    def __call__(self, root: Path, suspects: Sequence[Suspect], report: TestReport,
                 inputs: FailingInputs) -> Awaitable[list[Mutant]]: ...


@dataclass
class SearchStats:
    """The search's figures, as the journal's `search` event records them (a figure not measured is None)."""

    mutants: int | None = None  # candidates made
    tried: int | None = None  # of them, run against the failing tests
    passed_failing: int | None = None  # of them, passing the failing tests
    timeouts: int | None = None  # of them, cut by the per-mutant bound
    stopped: str | None = None  # why the last driver run stopped ("budget", "passing", "error", ...)
    with_covering: bool | None = None  # a mutant ran its line's covering tests too
    mutant_timeout_s: float | None = None  # the per-mutant bound
    error: str | None = None  # why a driver run failed
    rival_tried: int | None = None  # candidates tried for a second green edit
    rival: dict[str, Any] | None = None  # that edit, and an input the two differ on (driver/distinguish.py)
    rival_error: str | None = None
    rival_s: float | None = None
    partial_fixes: int | None = None  # a fix in two edits: the partial fixes found ...
    second_tried: int | None = None  # ... the second edits tried after them
    first: str | None = None  # ... and the pair found
    second: str | None = None
    pair_error: str | None = None

    @classmethod
    def of(cls, figures: dict[str, Any]) -> SearchStats:
        """From the driver's figures (an unknown figure raises: every figure has a field here)."""
        return cls(**figures)

    def as_dict(self) -> dict[str, Any]:
        """The figures measured (`stopped` whenever mutants were counted, even None)."""
        return {k: v for k, v in asdict(self).items() if v is not None or k == "stopped" and self.mutants is not None}


@dataclass
class SearchOutcome:
    """What `find_fix` found: the fix (None when nothing passed every test) with the suite's passing report,
    the original lines it replaces, a sentence on a rival edit, the figures, and what broke, if anything."""

    fix: Mutant | None = None
    report: TestReport | None = None
    before: str = ""  # the lines of the file the fix replaces, as they were
    source: str = ""  # the fixed file's text before the fix
    rival: str = ""  # another edit that passes too, and an input they differ on
    stats: SearchStats = field(default_factory=SearchStats)
    mutants: int = 0  # candidates made
    error: str = ""  # "making candidates: ..." or "trying mutants: ...": the search could not run as meant
    crash: str = ""  # the single-edit search raised this (the pair search still ran)


async def localize(deps: SearchDeps, report: TestReport, deadline: float | None = None) -> Localization:
    """Rank the suspicious functions and lines of the failure in `report` (localizing counts against the
    search's budget when it ends at `deadline`)."""
    return await localize_failure(deps, report, deadline)


def _phase(deps: SearchDeps, count: int) -> None:
    phase = getattr(deps, "phase", None)  # the editor's background search has no phase to report
    if phase is not None:
        phase("testing", f"trying single-edit fixes of the suspicious lines: 0/{count} tried", 6)


async def _made(deps: SearchDeps, report: TestReport, suspects: list[Suspect], inputs: FailingInputs,
                sources: Sequence[CandidateSource]) -> list[Mutant]:
    root = deps.shadow.root
    mutants = candidates(root, suspects, deps.settings.search.max_mutants, seen_exceptions(report), inputs)
    for source in sources:
        mutants += await source(root, suspects, report, inputs)
    return mutants


async def find_fix(deps: SearchDeps, report: TestReport, where: Localization, *, deadline: float | None = None,
                   suspects: list[Suspect] | None = None, pairs: bool = True, contain: bool = True,
                   sources: Sequence[CandidateSource] = ()) -> SearchOutcome:
    """A fix of the failure in `report`, localized in `where` (its suspects, or `suspects`), found within the
    budget ending at `deadline`. `pairs`: with a deadline, a fix in two edits after no single edit did.
    `contain`: a failure making or trying candidates is reported in the outcome, not raised. `sources`: extra
    asynchronous candidate sources, tried after the built-in candidates (see the module's docstring)."""
    root, failing = deps.shadow.root, where.failing
    suspects = where.suspects if suspects is None else suspects
    inputs = failing_inputs(report, root)
    try:
        mutants = await _made(deps, report, suspects, inputs, sources)
    except Exception as exc:
        if not contain:
            raise
        return SearchOutcome(error=f"making candidates: {type(exc).__name__}: {exc}")
    _phase(deps, len(mutants))
    originals = {m.path: read_exact(root / m.path) for m in mutants}
    outcome = SearchOutcome(mutants=len(mutants))
    suite_s = unhung_duration(report)
    try:
        winner, passed, figures = await find_single_edit(deps, failing, mutants, where, suite_s, report, deadline)
    except Exception as exc:
        if not contain:
            raise
        winner, passed, figures, outcome.crash = None, None, {}, f"{type(exc).__name__}: {exc}"
    if (winner is None or passed is None) and pairs and deadline is not None and not figures.get("error"):
        winner, passed, more = await from_partial_fix(  # two edits, from a partial fix (driver/pairs.py)
            deps, failing, mutants, (lambda m: where.covering(m.path, m.line)) if where.files else None, deadline,
            lambda: candidates(root, suspects, SECOND_EDITS, seen_exceptions(report), inputs),
            lambda more: find_single_edit(deps, failing, more, where, suite_s, report, deadline, rivals=False))
        figures.update(more)
    outcome.stats = SearchStats.of(figures)
    if figures.get("error"):
        outcome.error = f"trying mutants: {figures['error']}"
    if winner is not None and passed is not None:
        outcome.fix, outcome.report, outcome.source = winner, passed, originals[winner.path]
        outcome.before = "\n".join(originals[winner.path].split("\n")[winner.line - 1 : winner.last])
        outcome.rival = rival_sentence(figures.get("rival"))
    return outcome

