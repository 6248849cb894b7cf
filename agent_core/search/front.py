"""The search's front door: `localize` a failure, then `find_fix` a verified fix among the candidates.

`find_fix` makes the candidates of the suspicious lines (the one-line catalogue, the templates placed among
them by driver/ranking.py, then any extra `CandidateSource`'s), tries them against the failing tests in the
sandbox, verifies a passing one on the whole suite, and, when no single edit does, a fix in two edits (a
partial fix and a second edit). It returns a `SearchOutcome` with typed `SearchStats`; callers (the
pipeline's search node, the editor's background quick fix, the `diagnose` check) only adapt it.

With a model (`model`, the run's LLM client, and `search.infill` on), the model is a source of candidates
too: holes cut at the most suspicious lines, filled with many short samples (search/infill/) while the
search's own driver runs go on, each hole's candidates tried after the driver run they were ready by, and
on their own once those run out, for `search.infill_budget_s` more (driver/interleave.py, single_edit.py).
They are tried, verified and judged like the search's own; `SearchStats.infill` says per hole what it cost
and which one won.

A candidate after which a failing test fails further on in its own body is a step: once the search's own
candidates are done, the search runs again on top of the furthest steps, its own candidates and the model's
fills cut anew there (driver/steps.py, on_top.py; `SearchStats.steps`).
"""

from __future__ import annotations

import contextlib
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from typing import Any

from agent_core.llm.base import LLMClient
from agent_core.models import TestReport
from agent_core.sandbox.base import Sandbox
from agent_core.search.candidate import Mutant
from agent_core.search.driver.distinguish import rival_sentence
from agent_core.search.driver.held import held_sentence
from agent_core.search.driver.interleave import ModelBatches, ranked_places
from agent_core.search.driver.localizing import Localization, SearchDeps, localize_failure
from agent_core.search.driver.on_top import OnTop
from agent_core.search.driver.pairs import SECOND_EDITS, from_partial_fix
from agent_core.search.driver.partials import Partials
from agent_core.search.driver.screen import Screen
from agent_core.search.driver.single_edit import candidates, find_single_edit
from agent_core.search.driver.steps import StatementEnds, Steps
from agent_core.search.evidence import words
from agent_core.search.evidence.hangs import unhung_duration
from agent_core.search.evidence.inputs import failing_inputs, failing_types, seen_exceptions
from agent_core.search.evidence.spectrum import Suspect, is_candidate_file
from agent_core.search.infill import Hole, InfillOptions, failing_tests_code, spread_holes
from agent_core.settings import Settings
from agent_core.workspace.shadow import ShadowWorkspace, read_exact


@dataclass
class Collaborators:
    """What localizing and searching need of a run (`SearchDeps`), for a caller that has no run of its own."""

    settings: Settings
    sandbox: Sandbox
    shadow: ShadowWorkspace
    run_tests: Any  # async (sandbox, workspace, test_command, timeout_s, ...) -> TestReport


@dataclass
class SearchStats:
    """The search's figures, as the journal's `search` event records them (a figure not measured is None)."""

    mutants: int | None = None  # candidates made
    tried: int | None = None  # of them, run against the failing tests
    passed_failing: int | None = None  # of them, passing the failing tests
    timeouts: int | None = None  # of them, cut by the per-mutant bound
    stopped: str | None = None  # why the last driver run stopped ("budget", "passing", "error", ...)
    with_covering: bool | None = None  # a mutant ran its line's covering tests too
    refusing_tests: int | None = None  # tests that failed a refused candidate's suite, run by the later ones too
    mutant_timeout_s: float | None = None  # the per-mutant bound
    mutant_cap_s: float | None = None  # the setting's bound, when the per-mutant bound was derived below it
    unbound: int | None = None  # candidates dropped untried for reading a name nothing binds there (driver/screen.py)
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
    infill: dict[str, Any] | None = None  # the model's fills: holes, samples, kept, tried, tokens, seconds, won
    each_failing: bool | None = None  # the search's own candidates ran every failing test (driver/partials.py)
    combined: dict[str, Any] | None = None  # partial fixes kept, combinations made and tried, the winning one's parts
    steps: dict[str, Any] | None = None  # candidates that moved a failing test's failure on, those searched on top
    # of, and the steps beneath the fix (driver/steps.py)
    held: dict[str, Any] | None = None  # a fix that dropped code, held while the fills went on (driver/held.py)

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
    refused: list[str] = field(default_factory=list)  # candidates refused for swallowing the tests' errors


# The search's budget counts its localizing run, a run of the whole suite under a line recorder, and each
# candidate that passes the failing tests costs a whole-suite verification: a slow suite gets this many times
# its baseline's time on top of search.budget_s, so that its candidates get about the time a fast suite's do
# (more-itertools' suite, 55-85 s in the sandbox, left 0 of 1,000 candidates tried within 120 s).
SUITE_RUNS = 2
PARTIAL_FAILING = 8  # failing tests up to which candidates that pass some of them are kept and combined (driver/
# partials.py): each candidate tried so runs every one of them


def search_budget_s(settings: Settings, baseline: TestReport) -> float:
    """Seconds the search may spend, localizing included: search.budget_s and SUITE_RUNS times the baseline's
    time without its hung tests (a caller under a time budget caps it)."""
    return settings.search.budget_s + SUITE_RUNS * unhung_duration(baseline)


async def localize(deps: SearchDeps, report: TestReport, deadline: float | None = None) -> Localization:
    """Rank the suspicious functions and lines of the failure in `report` (localizing counts against the
    search's budget when it ends at `deadline`)."""
    return await localize_failure(deps, report, deadline)


def _phase(deps: SearchDeps, count: int) -> None:
    phase = getattr(deps, "phase", None)  # the editor's background search has no phase to report
    if phase is not None:
        phase("testing", f"trying single-edit fixes of the suspicious lines: 0/{count} tried", 6)


def _said(deps: SearchDeps) -> Callable[[int, int, Hole], None]:
    def said(number: int, total: int, hole: Hole) -> None:
        phase = getattr(deps, "phase", None)
        if phase is not None:
            phase("testing", f"asking the model to fill hole {number}/{total} ({hole.path}: {hole.label})", 14)

    return said


def _model_batches(deps: SearchDeps, model: LLMClient | None, suspects: list[Suspect], where: Localization,
                   until: float | None, screen: Screen, extend: Callable[[float], float | None] | None = None,
                   ) -> tuple[ModelBatches | None, list[tuple[str, int]]]:
    """The model's fills of the suspects' holes and of the lines that say the failing tests' words, when a model
    is given and `search.infill` is on; the prompts show the failing tests' code. With the places ranked (path,
    line), where holes are cut. `extend`: what may move the fills' end on (driver/interleave.py `FillsEnd`)."""
    s = deps.settings.search
    if model is None or not s.infill:
        return None, []
    ran = where.failing_ran() or {suspect.file: {line for line, _ in suspect.searched()} for suspect in suspects}
    ran.update((path, set()) for path in words.imported_by(deps.shadow.root, ran))  # their import-time lines
    sources: dict[str, str] = {}
    for path in [*(suspect.file for suspect in suspects), *(path for path in ran if is_candidate_file(path))]:
        if path not in sources:
            with contextlib.suppress(OSError, UnicodeDecodeError):
                sources[path] = read_exact(deps.shadow.root / path)
    spectrum = {(suspect.file, line): score for suspect in suspects for line, score in suspect.searched()}
    named = words.ranked(where.failing, {path: ran[path] for path in ran if path in sources}, sources, spectrum)
    places = ranked_places(suspects, sources, lambda path, line: screen.checks_at(path, line, line), named)
    holes = spread_holes(places[: s.infill_lines], sources)
    options = InfillOptions(samples=s.infill_samples, deadline=until,
                            tests=tuple(failing_tests_code(deps.shadow.root, where.failing)))
    batches = ModelBatches(model, holes, sources, options, on_hole=_said(deps), screen=screen,
                           later=places[s.infill_lines :], step=s.infill_lines, extend=extend)
    return (batches if places else None), places


async def find_fix(deps: SearchDeps, report: TestReport, where: Localization, *, deadline: float | None = None,
                   suspects: list[Suspect] | None = None, pairs: bool = True, contain: bool = True,
                   model: LLMClient | None = None, model_deadline: float | None = None,
                   model_extend: Callable[[float], float | None] | None = None) -> SearchOutcome:
    """A fix of the failure in `report`, localized in `where` (its suspects, or `suspects`), found within the
    budget ending at `deadline`. `pairs`: with a deadline, a fix in two edits after no single edit did.
    `contain`: a failure making or trying candidates is reported in the outcome, not raised. `model`: the
    model whose fills are tried beside and after the search's own candidates (see the module's docstring),
    until `model_deadline` (by default search.infill_budget_s after `deadline`), or the later end `model_extend`
    gives once it can tell (driver/interleave.py `FillsEnd`)."""
    root, failing = deps.shadow.root, where.failing
    suspects = where.suspects if suspects is None else suspects
    inputs = failing_inputs(report, root)
    screen = Screen(root, failing_types(report))  # the tests' errors no candidate may hide
    try:
        mutants = screen(candidates(root, suspects, deps.settings.search.max_mutants, seen_exceptions(report),
                                    inputs))
    except Exception as exc:
        if not contain:
            raise
        return SearchOutcome(error=f"making candidates: {type(exc).__name__}: {exc}")
    _phase(deps, len(mutants))
    originals = {m.path: read_exact(root / m.path) for m in mutants}
    outcome = SearchOutcome(mutants=len(mutants))
    suite_s = unhung_duration(report)
    until = model_deadline
    if until is None and deadline is not None:
        until = deadline + deps.settings.search.infill_budget_s
    batches, places = _model_batches(deps, model, suspects, where, until, screen, model_extend)
    partials = Partials(failing, {**(batches.sources if batches is not None else {}), **originals}, screen) \
        if 2 <= len(failing) <= PARTIAL_FAILING else None
    paired: dict[str, Any] = {}

    async def two_edits(own_until: float) -> tuple[Mutant, TestReport] | None:
        """Two edits, from a partial fix (driver/pairs.py), within the search's own time."""
        first, report_of, more = await from_partial_fix(
            deps, failing, mutants, (lambda m: where.covering(m.path, m.line)) if where.files else None, own_until,
            lambda: screen.kept(candidates(root, suspects, SECOND_EDITS, seen_exceptions(report), inputs)),
            lambda more: find_single_edit(deps, failing, more, where, suite_s, report, own_until, rivals=False),
            partials.own() if partials is not None else None)
        paired.update(more)
        return (first, report_of) if first is not None and report_of is not None else None

    steps = Steps(failing, partials is not None, StatementEnds(root)) if deadline is not None else None
    on_top = OnTop(deps, report, where, suspects, inputs, suite_s, model, batches, places, _said(deps))
    try:
        winner, passed, figures = await find_single_edit(
            deps, failing, mutants, where, suite_s, report, deadline, more=batches, more_until=until,
            then=two_edits if pairs and deadline is not None else None, partials=partials, steps=steps,
            on_step=on_top.search)
    except Exception as exc:
        if not contain:
            raise
        winner, passed, figures, outcome.crash = None, None, {}, f"{type(exc).__name__}: {exc}"
    figures.update(paired)
    if batches is not None:
        figures["infill"] = batches.figures(winner)
    if partials is not None:
        figures["combined"] = partials.figures(batches.label if batches is not None else lambda m: m.description,
                                               winner)
    if steps is not None:
        figures["steps"] = {**steps.figures(on_top.won), **on_top.figures()}
    if screen.unbound:
        figures["unbound"] = screen.unbound
    outcome.stats, outcome.refused = SearchStats.of(figures), screen.refused
    if figures.get("error"):
        outcome.error = f"trying mutants: {figures['error']}"
    if winner is not None and passed is not None:
        outcome.fix, outcome.report, outcome.source = winner, passed, originals[winner.path]
        outcome.before = "\n".join(originals[winner.path].split("\n")[winner.line - 1 : winner.last])
        said = (rival_sentence(figures.get("rival")), held_sentence(figures.get("held")))
        outcome.rival = " ".join(sentence for sentence in said if sentence)
    return outcome

