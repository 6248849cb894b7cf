"""The search step: localize the fault, then try single-edit mutants before any model call.

The pipeline's `search` node (pipeline/nodes/search.py) runs it between
baseline and plan; the editor's background quick fix (quickfix.py) and the
`diagnose` check (checks/diagnose.py) run it on their own, with any
collaborators that fit `SearchDeps`. Localizing and searching share
`search.budget_s`.
Localization (search/localize.py) ranks suspicious functions and lines
from per-test coverage, the failing tracebacks and where hung tests were
stopped (search/hangs.py). Then mutants of the top lines (search/mutants.py)
run against the failing tests in one sandboxed process with a per-mutant
time bound; a mutant that passes them is written into the shadow and the
whole suite is run with the normal runner (`find_single_edit`); a mutant
that fails is undone exactly.
"""

from __future__ import annotations

import itertools
import time
from collections import defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from agent_core.models import TestReport
from agent_core.sandbox.base import Sandbox
from agent_core.search.cases import NO_INPUTS, FailingInputs
from agent_core.search.differ import RivalSearch, rival_figures
from agent_core.search.hangs import hang_scores, hung_mutant_bound, localizing_bound, unhung_duration
from agent_core.search.localize import (
    Suspect,
    combine,
    coverage_scores,
    rank,
    traceback_scores,
)
from agent_core.search.mutants import Mutant, line_mutants
from agent_core.search.ranking import arrange, gate_lines, templates_for
from agent_core.search.sandboxed import collect_coverage, try_mutants
from agent_core.search.templates import EVIDENCE_TIER
from agent_core.settings import Settings
from agent_core.testing.runner import per_test_bound, pytest_argv
from agent_core.testing.verdict import judge
from agent_core.workspace.shadow import ShadowWorkspace, read_exact, write_exact

HOT_CHUNK = 150  # mutants per driver run: the ones a code swap cannot express (a `@curry`-wrapped function, a
# module-level line) are tried the slow way at the end of their run, so a run of all 1,000 would leave the
# likeliest of them to whatever budget the 999 others left (toolz `flip`: none)
PASSING_PER_DRIVER_RUN = 1  # a mutant that passes the failing (and covering) tests is verified at once: a driver
# that went on would spend its time on mutants after the likely fix (a new driver run costs a start-up)
COVERING_SUITE_S = 5.0  # a baseline suite slower than this: a mutant runs its line's covering tests before the suite
COVERING_TIMEOUT_FACTOR = 2  # ... and may take this many times the per-mutant bound
VERIFY_SLOWDOWN = 4  # a mutant's whole-suite run may take this many times the baseline's (plus VERIFY_MIN_S) ...
VERIFY_MIN_S = 30.0  # ... and at least this long: a loaded machine slows every run
SLOW_TEST_FACTOR = 3  # a mutant may take this many times its tests' time while localizing (when that is longer)


def _chunk_size(mutants: list[Mutant], index: int) -> int:
    """How many of `mutants` from `index` one driver run takes: HOT_CHUNK, but the evidence templates that lead
    the list (ranking.arrange puts them first) in a run of their own, as a module-level one among them (a
    constant's line) would otherwise wait for the end of a run of 150 (tomlkit's `_basic_escapes`: 55 s)."""
    leading = 0
    while index + leading < len(mutants) and mutants[index + leading].tier == EVIDENCE_TIER:
        leading += 1
    return leading if 0 < leading < HOT_CHUNK else HOT_CHUNK


class SearchDeps(Protocol):
    """What localizing and searching need of a run: RunDeps has it, and so does the editor's background search."""

    settings: Settings
    sandbox: Sandbox
    shadow: ShadowWorkspace
    run_tests: Any  # async (sandbox, workspace, test_command, timeout_s) -> TestReport


LOCALIZE_SHARE = 0.5  # localizing may take this share of what is left of search.budget_s (it counts against it)
MIN_LOCALIZE_S = 5.0  # less left than this: no coverage run, the tracebacks alone
BIG_SUITE_TESTS = 300  # above this many tests (or BIG_SUITE_S seconds), coverage is collected on a part of it
BIG_SUITE_S = 20.0


def _big_suite(report: TestReport) -> bool:
    return report.passed + report.failed + report.errors > BIG_SUITE_TESTS or unhung_duration(report) > BIG_SUITE_S


def neighbourhood(failing: list[str]) -> list[str]:
    """The failing tests and their nearest containers (a test's class, else its file): the part of a big
    suite whose coverage tells the failing tests' lines from the lines their passing neighbours run too.

    (Per-test coverage of a whole big suite costs several times its run time; its neighbours share the
    fixtures and most of the code paths, which is what the spectrum needs to set the faulty lines apart.)
    """
    out: list[str] = []
    for nodeid in failing:
        parts = nodeid.split("[", 1)[0].split("::")
        parent = "::".join(parts[:-1]) if len(parts) > 2 else parts[0]
        out += [nodeid, parent]
    return list(dict.fromkeys(out))


MIN_PASSING_NEIGHBOURS = 5  # fewer passing tests than this around the failing ones: their files are run instead


def files_of(failing: list[str]) -> list[str]:
    """The test files of the failing tests: the wider part of a big suite, when a test's class holds too few
    passing tests to tell its lines apart (a class of expected failures, a class of one test)."""
    return list(dict.fromkeys(nodeid.split("::", 1)[0] for nodeid in failing))


def _passing(data: dict | None) -> int:
    return sum(outcome == "passed" for outcome in ((data or {}).get("outcomes") or {}).values())


@dataclass
class Localization:
    """What localizing found: the ranked suspects, the evidence used ("coverage" or "traceback"), the failing
    test ids, and the per-test coverage (rel_path -> {nodeid: lines}) with each test's outcome, when collected."""

    suspects: list[Suspect]
    evidence: str
    failing: list[str]
    files: dict[str, dict[str, list[int]]] = field(default_factory=dict)
    outcomes: dict[str, str] = field(default_factory=dict)
    durations: dict[str, float] = field(default_factory=dict)  # seconds per test while localizing (under coverage)
    test_bound_s: float = 0.0  # the per-test bound while localizing: a test that took that long was cut (it hung)
    error: str = ""  # why the localizing driver collected nothing (a usage error, a crash), with its output's tail
    recorder: str = ""  # what recorded the per-test lines (coverage.py X, agentls' line tracer), or why none did

    _by_line: dict[tuple[str, int], list[str]] | None = field(default=None, init=False, repr=False)

    def covering(self, path: str, line: int) -> list[str]:
        """The tests that passed at the baseline and ran `path`:`line`: a mutant of that line must keep them
        passing, and they are a small part of a big suite (the ones most likely to notice a wrong mutant).

        From an index (path, line) -> tests built once: scanning every test's lines for each of 1,000 mutants
        took 200 s on a 1,238-test suite."""
        if self._by_line is None:
            failing = set(self.failing)
            self._by_line = defaultdict(list)
            for rel, per_test in self.files.items():
                for nodeid, lines in per_test.items():
                    if self.outcomes.get(nodeid) == "passed" and nodeid not in failing:
                        for number in dict.fromkeys(lines):
                            self._by_line[(rel, number)].append(nodeid)
        return list(self._by_line.get((path, line), ()))


def _share(timeout: float, deadline: float | None) -> float:
    """A localizing run's timeout within LOCALIZE_SHARE of what is left of the search's budget (0: no time left)."""
    if deadline is None:
        return timeout
    left = deadline - time.monotonic()
    return min(timeout, LOCALIZE_SHARE * left) if left >= MIN_LOCALIZE_S else 0.0


async def localize_failure(deps: SearchDeps, report: TestReport, deadline: float | None = None) -> Localization:
    """Rank the suspicious functions and lines of the failure in `report` (within the search's budget, when it
    ends at `deadline`: localizing counts against it)."""
    root = deps.shadow.root
    failing = [f.nodeid for f in report.failures]
    is_pytest, argv = pytest_argv(deps.settings.test_command, deps.sandbox.python)
    data = None
    per_test = localizing_bound(max(10.0, 2 * deps.settings.search.mutant_timeout_s), report)  # a looping test
    # fails, its loop covered; after a hang at the baseline, at the pace of the passing tests (search/hangs.py)
    if is_pytest and not report.timed_out and report.limit_hit is None:
        timeout = min(deps.settings.sandbox.timeout_s, max(30.0, 4 * report.duration_s + 10))
        select = neighbourhood(failing) if _big_suite(report) else None
        if select:
            timeout = deps.settings.sandbox.timeout_s  # a part of the suite: no longer bounded by its time
        if within := _share(timeout, deadline):
            data = await collect_coverage(deps.sandbox, root, argv[3:], within, per_test, select)
        wider = files_of(failing)
        if select and _passing(data) < MIN_PASSING_NEIGHBOURS and set(wider) != set(select) and (
                within := _share(timeout, deadline)):
            wider_data = await collect_coverage(deps.sandbox, root, argv[3:], within, per_test, wider)
            data = data if wider_data.get("error") else wider_data
    boosts = combine(traceback_scores(report, root), hang_scores(report, root))
    outcomes = (data or {}).get("outcomes") or {}
    failed_ids = [n for n, o in outcomes.items() if o in ("failed", "error")]
    if data and data.get("files") and failed_ids:
        suspects = rank(combine(coverage_scores(data["files"], outcomes), boosts), root)
        return Localization(suspects, "coverage", failed_ids, data["files"], outcomes, data.get("durations") or {},
                            per_test, recorder=data.get("recorder") or "")
    return Localization(rank(boosts, root), "traceback", failing, error=(data or {}).get("error") or "",
                        recorder=(data or {}).get("recorder") or "")


def candidates(root: Path, suspects: list[Suspect], limit: int, exceptions: list[str] | None = None,
               inputs: FailingInputs = NO_INPUTS) -> list[Mutant]:
    """Mutants of the suspects' lines, the most suspicious lines first whichever function they are in (a
    function scores as its best line, so its other lines may be far less suspicious than another function's);
    among equally suspicious lines, the catalogue's likelier bug classes first (then suspect and line order).
    Then search/ranking.py places the templates (with `exceptions`, the failing tests' exception types, and
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
    for _, tied in itertools.groupby(ranked, key=lambda entry: entry[0]):
        batch = [m for _, file, line in tied for m in line_mutants(file, sources[file], line)]
        out += sorted(batch, key=lambda m: m.tier)
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


def verify_bounds(settings: Settings, baseline: TestReport | None) -> tuple[float, float | None]:
    """(run timeout, per-test bound) of a mutant's whole-suite run: a correct single edit leaves the suite about as
    fast as the baseline found it, so a mutant that makes a test loop or the suite crawl is cut after
    VERIFY_SLOWDOWN times the baseline's time (plus a margin), and each test at the baseline's per-test bound
    (which lets a slow failing test take what it took, see per_test_bound), instead of costing the run's
    whole timeout."""
    run_timeout = settings.sandbox.timeout_s
    if baseline is None:
        return run_timeout, None
    bound = per_test_bound(baseline, settings.sandbox.test_timeout_s, run_timeout)
    return min(run_timeout, max(VERIFY_MIN_S, VERIFY_SLOWDOWN * baseline.duration_s + VERIFY_MIN_S)), bound


async def _verify(deps: SearchDeps, mutant: Mutant, baseline: TestReport | None = None) -> TestReport | None:
    """The whole suite's report with `mutant` in the shadow, kept there when it passes; else None, shadow restored."""
    shadow = deps.shadow
    known = mutant.path in shadow.originals
    shadow.remember(mutant.path)
    before = _apply(shadow.root, mutant)
    s = deps.settings
    report = None
    try:
        timeout_s, bound = verify_bounds(s, baseline)
        report = await deps.run_tests(deps.sandbox, shadow.root, s.test_command, timeout_s, test_timeout_s=bound,
                                      paced=not s.sandbox.test_timeout_s)
        report = judge(report, baseline)  # what "verified" means, as for any candidate (testing/verdict.py)
        return report if report.ok else None
    finally:
        if report is None or not report.ok:  # restored exactly, however the run ended
            write_exact(shadow.root / mutant.path, before)
            if not known:
                shadow.originals.pop(mutant.path, None)


def _slow_tests_bound(where: Localization | None, failing: list[str], mutants: list[Mutant],
                      covering: Any) -> float:
    """A per-mutant bound for tests slower than the setting allows: SLOW_TEST_FACTOR times (plus a second)
    the time the failing tests, and the most a mutant's covering tests, took while localizing (a correct
    mutant of a slow test must not be cut as if it looped). A test cut by the localizing bound is left out:
    its time is the bound's, not what it needs (four hanging tests made every mutant's bound 121 s, and the
    search's 120 s went on 9 of 779 mutants)."""
    if where is None or not where.durations:
        return 0.0
    spent = {t: s for t, s in where.durations.items() if not where.test_bound_s or s < where.test_bound_s}
    need = sum(spent.get(nodeid, 0.0) for nodeid in failing)
    if covering is not None:
        need += max((sum(spent.get(t, 0.0) for t in covering(m)) for m in mutants), default=0.0)
    return SLOW_TEST_FACTOR * need + 1.0


def _per_mutant(settings: Settings, where: Localization | None, suite_s: float, failing: list[str],
                mutants: list[Mutant], baseline: TestReport | None,
                stats: dict[str, Any]) -> tuple[Callable[[Mutant], list[str]] | None, float]:
    """(the covering tests of a mutant, on a suite slower than COVERING_SUITE_S with per-test coverage; the
    per-mutant bound), both noted in `stats`."""
    covering = None
    timeout_s = settings.search.mutant_timeout_s
    if where is not None and where.files and suite_s > COVERING_SUITE_S:
        def covering(mutant: Mutant) -> list[str]:
            return where.covering(mutant.path, mutant.line)

        timeout_s = COVERING_TIMEOUT_FACTOR * timeout_s  # the failing tests and their neighbours
        stats["with_covering"] = True
    slow_s = _slow_tests_bound(where, failing, mutants, covering)
    timeout_s = hung_mutant_bound(max(timeout_s, slow_s), slow_s, baseline)  # a mutant that still loops: seconds
    stats["mutant_timeout_s"] = round(timeout_s, 1)
    return covering, timeout_s


async def find_single_edit(
    deps: SearchDeps, failing: list[str], mutants: list[Mutant], where: Localization | None = None,
    suite_s: float = 0.0, baseline: TestReport | None = None, deadline: float | None = None, rivals: bool = True,
) -> tuple[Mutant | None, TestReport | None, dict]:
    """The first of `mutants` that passes the failing tests (and, on a suite slower than COVERING_SUITE_S
    seconds, `suite_s`, with per-test coverage in `where`, the passing tests that run its line: in the same
    sandboxed run, so a mutant that breaks a neighbour never costs a run of the whole suite), then the whole
    suite; with that suite's report and the search's figures. The search ends at `deadline` (by default
    `search.budget_s` from now; the caller's, when localizing already spent part of it). With `rivals`, a second
    green candidate of the winner's function is looked for, and an input the two differ on (search/differ.py)."""
    s = deps.settings.search
    deadline = deadline if deadline is not None else time.monotonic() + s.budget_s
    stats: dict[str, Any] = {"mutants": len(mutants), "tried": 0, "passed_failing": 0, "timeouts": 0, "stopped": None}
    covering, timeout_s = _per_mutant(deps.settings, where, suite_s, failing, mutants, baseline, stats)
    index = 0
    while index < len(mutants) and time.monotonic() < deadline:
        def live(done: int, base: int = index) -> None:  # the driver's count while it runs (search/sandboxed.py)
            _tick(deps, base + done, len(mutants))

        chunk = mutants[index : index + _chunk_size(mutants, index)]
        results, stopped = await try_mutants(
            deps.sandbox,
            deps.shadow.root,
            failing,
            chunk,
            mutant_timeout_s=timeout_s,
            budget_s=deadline - time.monotonic(),
            max_passing=PASSING_PER_DRIVER_RUN,
            covering=covering,
            hot=True,
            on_progress=live,
        )
        stats["stopped"] = stopped
        if stopped and stopped.startswith("error: "):  # the driver failed (sandboxed.try_mutants): said, not silent
            stats["stopped"], stats["error"] = "error", stopped.removeprefix("error: ")
        # past the last one tried, in the chunk's order (try_mutants keeps it): a pass stops the driver, and the
        # cold ones after it were not tried
        if results:
            index += [id(m) for m in chunk].index(id(results[-1][0])) + 1
        stats["tried"] += len(results)
        _tick(deps, stats["tried"], len(mutants))
        stats["timeouts"] += sum(outcome == "timeout" for _, outcome in results)
        for mutant, outcome in results:
            if outcome == "passed":
                stats["passed_failing"] += 1
                source = read_exact(deps.shadow.root / mutant.path)  # before the mutant: a rival is tried on it
                report = await _verify(deps, mutant, baseline)
                if report is not None and rivals and deps.settings.search.rivals:  # another green edit, and
                    # an input on which the two differ (search/differ.py)
                    stats.update(await rival_figures(deps, RivalSearch(
                        mutant, source, mutants[index:], failing, report, timeout_s, covering,
                        lambda rival: _verify(deps, rival, baseline), verify_bounds(deps.settings, baseline)[0],
                        deadline, report.test_files or sorted(deps.shadow.verification))))
                if report is not None:
                    return mutant, report, stats
        if stopped == "budget" or not results:
            break
    return None, None, stats


def _tick(deps: SearchDeps, tried: int, total: int) -> None:
    """How far the search is (mutants tried of all), for a front end's progress; the editor's background search
    has no phase to report."""
    phase = getattr(deps, "phase", None)
    if phase is not None:
        tried = min(tried, total)
        phase("testing", f"trying single-edit fixes: {tried}/{total} tried", 6 + 8 * tried / max(1, total))
