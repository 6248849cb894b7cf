"""Trying candidates: which of them passes the failing tests, then the whole suite, within the search's budget.

`candidates` orders the one-line catalogue's mutants of the suspicious lines (the most suspicious first) and
has driver/ranking.py place the templates among them. `find_single_edit` runs them against the failing
tests in sandboxed driver runs with a per-mutant time bound (chunks of HOT_CHUNK, swapped into the live
functions); a mutant that passes is written into the shadow and the whole suite is run with the normal
runner and judged, up to its first failed test (VERIFY_STOP_AFTER); a mutant that fails there is undone exactly,
and the tests that failed it are run by the later candidates in their driver runs (REFUSING_TESTS). With rivals
on, a second green candidate of the winner's function and an input the two differ on are looked for
(driver/distinguish.py).
"""

from __future__ import annotations

import contextlib
import itertools
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core.models import TestReport
from agent_core.search.candidate import Mutant
from agent_core.search.catalogue.line_mutants import line_mutants
from agent_core.search.driver.distinguish import RivalSearch, rival_figures
from agent_core.search.driver.fills import Fills
from agent_core.search.driver.held import Held
from agent_core.search.driver.interleave import ModelBatches
from agent_core.search.driver.localizing import Localization, SearchDeps
from agent_core.search.driver.mutant_bound import MutantBound, per_mutant
from agent_core.search.driver.partials import Partials
from agent_core.search.driver.ranking import arrange, gate_lines, templates_for
from agent_core.search.driver.sandboxed import Reached, try_mutants
from agent_core.search.driver.steps import STEP_S, Step, Steps
from agent_core.search.evidence.inputs import NO_INPUTS, FailingInputs
from agent_core.search.evidence.spectrum import Suspect
from agent_core.search.templates.table import EVIDENCE_TIER
from agent_core.search.twins import Twins
from agent_core.testing.bounds import verify_bounds
from agent_core.testing.judged import SuiteRun, judged_run
from agent_core.workspace.shadow import read_exact, write_exact

HOT_CHUNK = 150  # mutants per driver run: the ones a code swap cannot express (a `@curry`-wrapped function, a
# module-level line) are tried the slow way at the end of their run, so a run of all 1,000 would leave the
# likeliest of them to whatever budget the 999 others left
PASSING_PER_DRIVER_RUN = 1  # a mutant that passes the failing (and covering) tests is verified at once: a driver
# that went on would spend its time on mutants after the likely fix (a new driver run costs a start-up)
LIKELY_RANKS = 3 * HOT_CHUNK  # the search's own candidates tried before the model starts filling holes beside
# them: of its 86 fixes in the last search-only runs of the three corpora (bench/results: history_fix_rate 4df1bee,
# real_fix_rate fbbb72e and b79d6bb, fix_rate bf29853), the last came at candidate 349
LIKELY_S = 45.0  # ... or the seconds the search may try its own before the model begins, if that comes first: where
# each candidate takes a second (a slow suite's failing tests), 450 take minutes and the model sat idle (pyparsing's
# real-history bugs: 179 and 580 candidates tried in 220 s, the fills began 139-172 s into a 280 s task); each
# of the search's own 18 fixes of that corpus took its search at most 34.3 s, localizing and verifying included
EACH_FAILING_S = 1.0  # the failing tests' time (while localizing) up to which the search's own candidates run
# them all, not only up to the first that fails, so that the partial fixes among them are known (driver/partials.py)
EACH_FAILING_RANKS = HOT_CHUNK  # ... its likeliest ones only: with all of them run so, the search tried 882 of
# attrs' 1,000 candidates (the real-history bug namedtuple_retain_type) within its time, and all 1,000 with these
# (the two-edit step looks for its partial fixes among the first 60)
REFUSING_TESTS = 6  # tests that failed the whole-suite run of a candidate that passed the failing tests, run by
# every later candidate after its failing tests (the latest kept). In mutation testing a test that killed one
# mutant is the likeliest to kill the next (Zhang et al., "Faster mutation testing inspired by test
# prioritization and reduction", ISSTA 2013); here each such candidate cost a whole-suite run: in a real tomlkit
# bug's run 10 of them took 9-20 s each, 150 of its 280 s, where the same tests run in the driver take a second
VERIFY_STOP_AFTER = 1  # a candidate's whole-suite run ends at its first failed test: one failure refuses it (every
# test must pass, testing/verdict.py), and the tests after it only cost time; a candidate that made tests hang ran
# to the run's bound instead (42 s of a real sqlparse bug's 280, where its suite takes 3 s). Stopping a patch's
# validation at its first failing test is what repair tools do to afford more candidates (Qi, Mao and Lei,
# "Efficient automated program repair through fault-recorded testing prioritization", ICSM 2013)


def _chunk_size(mutants: list[Mutant], index: int) -> int:
    """How many of `mutants` from `index` one driver run takes: HOT_CHUNK, but the evidence templates that lead
    the list (ranking.arrange puts them first) in a run of their own, as a module-level one among them (a
    constant's line) would otherwise wait for the end of a run of HOT_CHUNK."""
    leading = 0
    while index + leading < len(mutants) and mutants[index + leading].tier == EVIDENCE_TIER:
        leading += 1
    return leading if 0 < leading < HOT_CHUNK else HOT_CHUNK


def candidates(root: Path, suspects: list[Suspect], limit: int, exceptions: list[str] | None = None,
               inputs: FailingInputs = NO_INPUTS) -> list[Mutant]:
    """Mutants of the suspects' lines, the most suspicious lines first whichever function they are in (a
    function scores as its best line, so its other lines may be far less suspicious than another function's);
    among equally suspicious lines, the catalogue's likelier bug classes first (then suspect and line order);
    a mutant of a line with twins is followed by the same edit at its twins too (search/twins.py).
    Then search/driver/ranking.py places the templates (with `exceptions`, the failing tests' exception types, and
    `inputs`, what their inputs are made of) and moves the candidates with a concern (a variable left
    unused) after the ones without."""
    sources: dict[str, str] = {}
    ranked: list[tuple[float, str, int]] = []
    for suspect in suspects:
        if suspect.file not in sources:
            try:
                sources[suspect.file] = read_exact(root / suspect.file)
            except (OSError, UnicodeDecodeError):
                continue
        ranked += [(score, suspect.file, line) for line, score in suspect.searched()]
    ranked.sort(key=lambda entry: -entry[0])  # stable: suspect order, then line order, among ties
    out: list[Mutant] = []
    twins: dict[str, Twins] = {}
    made: set[tuple[str, int, str]] = set()
    for _, tied in itertools.groupby(ranked, key=lambda entry: entry[0]):
        batch = [m for _, file, line in tied for m in line_mutants(file, sources[file], line)]
        for mutant in sorted(batch, key=lambda m: m.tier):
            out.append(mutant)
            if mutant.path not in twins:
                twins[mutant.path] = Twins(sources[mutant.path])  # one parse per file
            copied = twins[mutant.path].made_at(mutant)  # the same edit at the line's copies too (search/twins.py)
            if copied is not None and (key := (copied.path, copied.line, copied.text)) not in made:
                made.add(key)  # made once: from the first copy ranked
                out.append(copied)
        if len(out) >= limit:
            break
    templates = templates_for(root, sources, ranked, exceptions, inputs, gate_lines(sources, suspects))
    return arrange(out[:limit], templates, sources, limit, bool(exceptions))


def _apply(root: Path, mutant: Mutant) -> str:
    """Write `mutant` into the file; the file's previous text."""
    target = root / mutant.path
    before = read_exact(target)
    write_exact(target, mutant.applied(before))
    return before


async def _verify(deps: SearchDeps, mutant: Mutant, baseline: TestReport | None = None,
                  refusing: list[str] | None = None) -> TestReport | None:
    """The whole suite's report with `mutant` in the shadow, kept there when it passes; else None, shadow restored
    (and the tests that failed added to `refusing`, when given)."""
    shadow = deps.shadow
    known = mutant.path in shadow.originals
    shadow.remember(mutant.path)
    before = _apply(shadow.root, mutant)
    s = deps.settings
    report = None
    try:
        timeout_s, bound = verify_bounds(s, baseline)
        report = (await judged_run(SuiteRun(deps.sandbox, shadow.root, s.test_command, timeout_s, bound,
                                            paced=not s.sandbox.test_timeout_s, runner=deps.run_tests,
                                            stop_after=VERIFY_STOP_AFTER),
                                   baseline)).report  # the one judged run (testing/judged.py): a one-line
        # candidate edits no protected file, so no guard
        if not report.ok and refusing is not None:
            refusing += [failure.nodeid for failure in report.failures]
        return report if report.ok else None
    finally:
        if report is None or not report.ok:  # restored exactly, however the run ended
            write_exact(shadow.root / mutant.path, before)
            if not known:
                shadow.originals.pop(mutant.path, None)


@dataclass
class _Trial:
    """One search's way of trying a batch of candidates (its per-mutant bound, covering tests and figures)."""

    deps: SearchDeps
    failing: list[str]
    baseline: TestReport | None
    covering: Callable[[Mutant], list[str]] | None
    bound: MutantBound
    stats: dict[str, Any]
    steps: Steps | None = None
    refusing: list[str] = field(default_factory=list)  # the tests that refused earlier candidates (REFUSING_TESTS)
    held: Held | None = None  # a fill that drops code, held while the model's fills go on (driver/held.py)

    @property
    def timeout_s(self) -> float:
        """The per-mutant bound of a child that runs the failing, covering and refusing tests."""
        return self.bound.with_tests(self.refusing)

    def _tests(self) -> Callable[[Mutant], list[str]] | None:
        """What each candidate runs after the failing tests: its covering tests, then the tests that refused earlier
        candidates."""
        if not self.refusing:
            return self.covering
        covering, refusing = self.covering, list(self.refusing)
        return lambda mutant: list(dict.fromkeys([*(covering(mutant) if covering is not None else []), *refusing]))

    def _refused(self, failed: list[str]) -> None:
        """Note the tests that failed a refused candidate's whole-suite run: those that passed before (and are not
        the failing tests) join `refusing`, the latest REFUSING_TESTS kept. What the report names that is no test
        of the baseline (the session's own error, a test it did not run) is left out."""
        before = self.baseline.outcomes if self.baseline is not None else {}
        for nodeid in failed:
            passed_before = before.get(nodeid) == "passed" if before else True  # outcomes: our pytest plugin's
            if "::" in nodeid and nodeid not in self.failing and passed_before:
                self.refusing = [t for t in self.refusing if t != nodeid][-(REFUSING_TESTS - 1):] + [nodeid]
        if failed:
            self.stats["refusing_tests"] = len(self.refusing)

    async def run(self, chunk: list[Mutant], until: float, live: Callable[[int], None] | None = None,
                  tests_of: dict[int, dict[str, str]] | None = None) -> tuple[list[tuple[Mutant, str]], str | None]:
        """`chunk` tried against the failing tests in one driver run ending by `until`: (mutant, outcome) of
        those tried, in the chunk's order, and why the run stopped. With `tests_of`, every failing test runs
        and each mutant's outcome per test goes into it (sandboxed.try_mutants). With `steps`, the failing
        tests' reach is recorded and the steps among the chunk noted (driver/steps.py)."""
        reached = Reached() if self.steps is not None else None
        results, stopped = await try_mutants(
            self.deps.sandbox, self.deps.shadow.root, self.failing, chunk, mutant_timeout_s=self.timeout_s,
            budget_s=until - time.monotonic(), max_passing=PASSING_PER_DRIVER_RUN, covering=self._tests(),
            hot=True, on_progress=live, tests_of=tests_of, reached=reached)
        if self.steps is not None and reached is not None:
            self.steps.note(results, reached, tests_of)
        self.stats["stopped"] = stopped
        if stopped and stopped.startswith("error: "):  # the driver failed (sandboxed.try_mutants): said, not silent
            self.stats["stopped"], self.stats["error"] = "error", stopped.removeprefix("error: ")
        self.stats["tried"] += len(results)
        self.stats["timeouts"] += sum(outcome == "timeout" for _, outcome in results)
        return results, stopped

    async def each(self, batch: list[Mutant], until: float, rest: list[Mutant], rivals: bool,
                   tests_of: dict[int, dict[str, str]] | None = None
                   ) -> tuple[tuple[Mutant, TestReport] | None, list[tuple[Mutant, str]]]:
        """Every candidate of `batch` tried (`run`), each that passes the failing tests verified (`verified`): (the
        fix or None, the results of all tried). A driver run stops at the first that passes ("enough"): when the
        whole suite refuses it, the next run takes the rest of the batch; a run stopped by the budget or an error
        ends it."""
        tried: list[tuple[Mutant, str]] = []
        while batch and time.monotonic() < until:
            results, stopped = await self.run(batch, until, tests_of=tests_of)
            tried += results
            if (found := await self.verified(results, rest, until, rivals)) is not None:
                return found, tried
            if stopped != "enough":
                break
            done = {id(mutant) for mutant, _ in results}
            batch = [mutant for mutant in batch if id(mutant) not in done]
        return None, tried

    async def verified(self, results: list[tuple[Mutant, str]], rest: list[Mutant], deadline: float,
                       rivals: bool) -> tuple[Mutant, TestReport] | None:
        """The first of `results` that passed and passes the whole suite too (with a rival looked for among
        `rest`, when `rivals`), with that suite's report."""
        deps = self.deps
        for mutant, outcome in results:
            if outcome != "passed":
                continue
            self.stats["passed_failing"] += 1
            source = read_exact(deps.shadow.root / mutant.path)  # before the mutant: a rival is tried on it
            known = mutant.path in deps.shadow.originals
            failed: list[str] = []
            report = await _verify(deps, mutant, self.baseline, failed)
            self._refused(failed)
            if report is not None and rivals and deps.settings.search.rivals:  # another green edit, and an
                # input on which the two differ (search/driver/distinguish.py); the fix when the winner gives way
                figures, chosen = await rival_figures(deps, RivalSearch(
                    mutant, source, rest, self.failing, report, self.timeout_s, self.covering,
                    lambda rival: _verify(deps, rival, self.baseline), verify_bounds(deps.settings, self.baseline)[0],
                    deadline, report.test_files or sorted(deps.shadow.verification)))
                self.stats.update(figures)
                if chosen is not None:
                    mutant, report = chosen
            if report is not None and (self.held is None or not self.held.offer(mutant, report, source, known)):
                return mutant, report
        return None


async def _try_combined(trial: _Trial, partials: Partials, batch: list[Mutant], until: float, rest: list[Mutant],
                        rivals: bool) -> tuple[Mutant, TestReport] | None:
    """Combinations of partial fixes (`batch`), tried and verified, and the combinations the ones that are partial
    fixes in their turn make: the fix, or None."""
    while batch:
        if time.monotonic() >= until:
            return None
        tests_of: dict[int, dict[str, str]] = {}
        found, results = await trial.each(batch, until, rest, rivals, tests_of)
        partials.tried += len(results)
        if found is not None:
            return found
        batch = partials.after(results, tests_of)
    return None


async def _try_fills(trial: _Trial, fills: Fills, batches: list[list[Mutant]], until: float, rest: list[Mutant],
                     rivals: bool, partials: Partials | None) -> tuple[Mutant, TestReport] | None:
    """The model's `batches`, tried and verified like the search's own candidates: the fix, or None. With
    `partials`, each batch runs every failing test, and the combinations of the partial fixes it found with
    the earlier ones are tried next (driver/partials.py)."""
    for batch in batches:
        if time.monotonic() >= until:
            return None
        tests_of: dict[int, dict[str, str]] | None = {} if partials is not None else None
        found, results = await trial.each(batch, until, rest, rivals, tests_of)
        fills.more.count_tried([m for m, _ in results])
        if found is not None:
            return found
        if partials is not None and tests_of is not None and (
                found := await _try_combined(trial, partials, partials.after(results, tests_of), until, rest, rivals)):
            return found
    return None


OnStep = Callable[[Step, float], Awaitable["tuple[Mutant, TestReport] | None"]]  # a search on top of a step, until


async def _explore(steps: Steps | None, on_step: OnStep | None, fills: Fills | None, until: float,
                   every: bool = False) -> tuple[Mutant, TestReport] | None:
    """The furthest step not yet searched on top of (`on_step`; with `every`, all of them in turn), within
    STEP_S and by `until`, with this level's fills paused meanwhile: the fix found on top of it, or None. One
    at a time beside the fills: the holes still queued are as likely a way to the fix as a step is."""
    while steps is not None and on_step is not None and time.monotonic() < until and (step := steps.next()):
        async with fills.paused() if fills is not None else contextlib.nullcontext():
            if found := await on_step(step, min(until, time.monotonic() + STEP_S)):
                return found
        if not every:
            break
    return None


def _each_failing_own(partials: Partials | None, where: Localization | None, failing: list[str]) -> bool:
    """Whether the search's own candidates run every failing test too (for partial fixes): when their time
    while localizing was at most EACH_FAILING_S in all (each candidate that fails them then costs that)."""
    if partials is None or where is None or not where.durations or any(t not in where.durations for t in failing):
        return False
    return sum(where.durations[t] for t in failing) <= EACH_FAILING_S


async def find_single_edit(
    deps: SearchDeps, failing: list[str], mutants: list[Mutant], where: Localization | None = None,
    suite_s: float = 0.0, baseline: TestReport | None = None, deadline: float | None = None, rivals: bool = True,
    more: ModelBatches | None = None, more_until: float | None = None,
    then: Callable[[float], Awaitable[tuple[Mutant, TestReport] | None]] | None = None,
    partials: Partials | None = None, steps: Steps | None = None, on_step: OnStep | None = None,
    fills_at_once: bool = False,
) -> tuple[Mutant | None, TestReport | None, dict]:
    """The first of `mutants` that passes the failing tests (and, on a suite slower than COVERING_SUITE_S seconds
    (driver/mutant_bound.py), `suite_s`, with per-test coverage in `where`, the passing tests that run its line: in
    the same sandboxed run, so a mutant that breaks a neighbour never costs a run of the whole suite), then the whole
    suite; with that suite's report and the search's figures. The search ends at `deadline` (by default
    `search.budget_s` from now; the caller's, when localizing already spent part of it). With `rivals`, a second
    green candidate of the winner's function is looked for, and an input the two differ on (driver/distinguish.py).
    `more`: the model's candidates, made once the search tried its LIKELY_RANKS likeliest candidates (or all of
    them, or LIKELY_S seconds after it began, whichever comes first) while its driver runs go on (a local model
    server and the sandboxed tests each keep a core busy; the tests yield), each hole's tried after the driver
    run they were ready by, and on their own once `mutants` are done, until `more_until` or the end `more` moved
    on to (driver/interleave.py `FillsEnd`).
    Taken in turns, the model had the machine to itself for a third of the search's time and the driver for the
    rest: on the 32 real-history bugs the fills got 75-200 s of a 280 s task, and the search's own fixes came
    later by the model's turns (wall median 88 s against 40 s without the model). Begun at once, they would bill
    a hole's samples to the many runs the search fixes alone in its first driver runs. `then`: the search's next
    step once its
    own candidates are done (two edits, driver/pairs.py), within its own deadline, before the model's
    candidates go on alone: what the search alone finds, it still finds with the model on. `partials`: the
    partial fixes among the candidates, combined (driver/partials.py): the model's fills run every failing test
    for it, and the search's likeliest own candidates too when those tests are quick (`_each_failing_own`); the
    combinations of its own are tried once its own candidates are done (before `then`), those with a fill
    right after that fill's batch. `steps`: the failing tests' reach recorded in every driver run and the
    candidates that move it on noted (driver/steps.py); once the search's own candidates are done (after
    `then`), and after each of the model's batches, `on_step` searches on top of the furthest ones, each
    within STEP_S. `fills_at_once`: the model's fills begin with the first driver run (a search on top of a
    step, whose own candidates are one run). A fill that is a fix but drops code is held up to HOLD_S while the
    search goes on for one that does not (driver/held.py)."""
    deadline = deadline if deadline is not None else time.monotonic() + deps.settings.search.budget_s

    stats: dict[str, Any] = {"mutants": len(mutants), "tried": 0, "passed_failing": 0, "timeouts": 0, "stopped": None}
    covering, bound = per_mutant(deps.settings, where, suite_s, failing, mutants, baseline, stats)
    held = Held(deps) if more is not None else None  # a fill that drops code waits for another fix (driver/held.py)
    trial = _Trial(deps, failing, baseline, covering, bound, stats, steps, held=held)

    def end(at: float) -> float:  # `at`, or the end of a held fix's wait when that comes first
        return held.end(at) if held is not None else at

    def until() -> float:  # the fills' end, as it stands (`more.end` may move on once)
        moved = more.end.at if more is not None else None
        return end(max(deadline, more_until or deadline, moved or deadline))

    def answer(found: tuple[Mutant, TestReport] | None) -> tuple[Mutant | None, TestReport | None, dict]:
        if held is not None:
            found = held.settle(found)
            if held.figures:
                stats["held"] = held.figures
        return (found[0], found[1], stats) if found is not None else (None, None, stats)
    fills: Fills | None = None
    each = _each_failing_own(partials, where, failing)
    stats["each_failing"] = each if partials is not None else None
    waiting: list[Mutant] = []  # the combinations of the search's own partial fixes
    try:
        index, own = 0, True
        while own and index < len(mutants) and time.monotonic() < end(deadline):
            def live(done: int, base: int = index) -> None:  # the driver's count while it runs (sandboxed.py)
                _tick(deps, base + done, len(mutants))

            if more is not None and fills is None:
                fills = Fills(more, None if fills_at_once else LIKELY_S)  # begins beside a driver run, at
                # LIKELY_RANKS or LIKELY_S
            if fills is not None and index >= LIKELY_RANKS:
                fills.begin()
            chunk = mutants[index : index + _chunk_size(mutants, index)]
            tests_of: dict[int, dict[str, str]] | None = {} if each and index < EACH_FAILING_RANKS else None
            results, stopped = await trial.run(chunk, end(deadline), live, tests_of)
            if results:  # past the last one tried, in the chunk's order (a pass stops the driver: the cold ones
                # after it were not tried)
                index += [id(m) for m in chunk].index(id(results[-1][0])) + 1
            _tick(deps, stats["tried"], len(mutants))
            if found := await trial.verified(results, mutants[index:], deadline, rivals):
                return answer(found)
            if partials is not None and tests_of is not None:
                waiting += partials.after(results, tests_of)
            own = stopped != "budget" and bool(results)
            if more is None:
                continue
            # a candidate that passed the failing tests and was refused by the whole suite: the model's next holes
            # go to its line (driver/interleave.py)
            if fills is not None:
                fills.prefer(results)
            if fills is not None and (found := await _try_fills(trial, fills, fills.ready(), until(), mutants[index:],
                                                                rivals, partials)):
                return answer(found)
            if held is not None and held.due():
                return answer(None)
        if partials is not None and waiting and not stats.get("error") and (
                found := await _try_combined(trial, partials, waiting, end(deadline), mutants[index:], rivals)):
            return answer(found)
        if more is not None:
            fills = fills or Fills(more)
            fills.own_over()
        if then is not None and not stats.get("error") and (found := await then(end(deadline))):
            return answer(found)
        if not stats.get("error") and (found := await _explore(steps, on_step, fills, until(), fills is None)):
            return answer(found)
        while fills is not None:
            if (batch := await fills.next(until())) is None:
                if fills.done or time.monotonic() >= until():
                    break
                continue  # the end moved on while waiting
            if found := await _try_fills(trial, fills, [batch], until(), mutants[index:], rivals, partials):
                return answer(found)
            if found := await _explore(steps, on_step, fills, until()):
                return answer(found)
        return answer(None)
    finally:
        if fills is not None:
            await fills.close()


def _tick(deps: SearchDeps, tried: int, total: int) -> None:
    """How far the search is (mutants tried of all), for a front end's progress; the editor's background search
    has no phase to report."""
    phase = getattr(deps, "phase", None)
    if phase is not None:
        tried = min(tried, total)
        phase("testing", f"trying single-edit fixes: {tried}/{total} tried", 6 + 8 * tried / max(1, total))
