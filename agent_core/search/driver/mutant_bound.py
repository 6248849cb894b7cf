"""The per-mutant bound of the search's driver runs: how long one candidate's child may take before it counts as hung.

A child runs the failing tests, then (on a slow suite) the passing tests that cover the candidate's line and
the tests that refused earlier candidates (single_edit.py). The setting, `search.mutant_timeout_s` (twice it
with covering tests), is the cap, raised for tests slower than it allows (`slow_tests_bound`). Under that cap
the bound follows what the child's tests took while localizing (`derived_bound`): SLOW_TEST_FACTOR times their
time plus a second, at least MIN_MUTANT_S (a fork, the tests, a machine the model loads). A mutant that makes
the code loop costs that bound, not the setting's: in a real jinja2 bug's run (required_block_check, the
real-history corpus), 8 mutants cut at the setting's 10 s took 80 of its 280 s, where its children take a
fraction of a second.

What a test took while localizing can be less than it needs in a child:

- a failing test's run may have stopped at its first assertion, where the fix runs it to its end: it counts as
  the slowest test that passed in its file, when that is longer (tests of one file are alike);
- a fixture set up once for the session or a module was paid by the first test that used it, which may be none
  of the child's: the slowest test of the run counts once more, for the one fixture it may have set up;
- a test that hung while localizing counts as none (its time is the bound's, not what it needs), and while
  failing tests hang, `hung_mutant_bound` (evidence/hangs.py) has the say.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from agent_core.models import TestReport
from agent_core.search.candidate import Mutant
from agent_core.search.driver.localizing import Localization
from agent_core.search.evidence.hangs import MIN_MUTANT_S, hung, hung_mutant_bound
from agent_core.settings import Settings

COVERING_SUITE_S = 5.0  # a baseline suite slower than this: a mutant runs its line's covering tests before the suite
COVERING_TIMEOUT_FACTOR = 2  # ... and may take this many times the per-mutant bound
SLOW_TEST_FACTOR = 3  # a mutant may take this many times its tests' time while localizing (plus a second)


@dataclass(frozen=True)
class MutantBound:
    """The per-mutant bound of the failing (and covering) tests' child, `base_s`, and, when it is derived from
    their times (below the setting's `cap_s`), what it grows by for other tests a child runs too."""

    base_s: float
    cap_s: float = 0.0  # 0: not derived, `base_s` is the setting's bound (or the tests' own, above it)
    durations: Mapping[str, float] = field(default_factory=dict)  # each test's seconds while localizing

    def with_tests(self, tests: Sequence[str]) -> float:
        """The bound of a child that also runs `tests` (those that refused earlier candidates): SLOW_TEST_FACTOR
        times their time more, up to the cap."""
        if not self.cap_s or not tests:
            return self.base_s
        return min(self.cap_s, self.base_s + SLOW_TEST_FACTOR * sum(self.durations.get(t, 0.0) for t in tests))


def _spent(where: Localization) -> dict[str, float]:
    """Each test's time while localizing, the tests the localizing bound cut left out."""
    return {t: s for t, s in where.durations.items() if not where.test_bound_s or s < where.test_bound_s}


def _need(where: Localization, spent: dict[str, float], failing: Sequence[str], mutants: Sequence[Mutant],
          covering: Callable[[Mutant], list[str]] | None) -> float:
    """The seconds a child's tests took while localizing: the failing tests' and the most any mutant's covering
    tests took."""
    need = sum(spent.get(nodeid, 0.0) for nodeid in failing)
    if covering is not None:
        need += max((sum(spent.get(t, 0.0) for t in covering(m)) for m in mutants), default=0.0)
    return need


def slow_tests_bound(where: Localization | None, failing: Sequence[str], mutants: Sequence[Mutant],
                     covering: Callable[[Mutant], list[str]] | None) -> float:
    """A per-mutant bound for tests slower than the setting allows: SLOW_TEST_FACTOR times (plus a second)
    the time the failing tests, and the most a mutant's covering tests, took while localizing (a correct
    mutant of a slow test must not be cut as if it looped). A test cut by the localizing bound is left out:
    its time is the bound's, not what it needs (four hanging tests made every mutant's bound 121 s, and the
    search's 120 s went on 9 of 779 mutants)."""
    if where is None or not where.durations:
        return 0.0
    return SLOW_TEST_FACTOR * _need(where, _spent(where), failing, mutants, covering) + 1.0


def derived_bound(where: Localization | None, failing: Sequence[str], mutants: Sequence[Mutant],
                  covering: Callable[[Mutant], list[str]] | None) -> float | None:
    """The bound the child's tests' own times give (module docstring), or None when localizing did not time
    every failing test."""
    if where is None or not where.durations or any(t not in where.durations for t in failing):
        return None
    spent = _spent(where)
    slowest_in: dict[str, float] = {}  # a test file -> its slowest test that passed while localizing
    for nodeid, seconds in spent.items():
        if where.outcomes.get(nodeid) == "passed":
            file = nodeid.split("::", 1)[0]
            slowest_in[file] = max(slowest_in.get(file, 0.0), seconds)
    fixed = {t: max(spent.get(t, 0.0), slowest_in.get(t.split("::", 1)[0], 0.0)) for t in failing}
    need = _need(where, {**spent, **fixed}, failing, mutants, covering) + max(spent.values(), default=0.0)
    return max(MIN_MUTANT_S, SLOW_TEST_FACTOR * need + 1.0)


def per_mutant(settings: Settings, where: Localization | None, suite_s: float, failing: list[str],
               mutants: list[Mutant], baseline: TestReport | None,
               stats: dict[str, Any]) -> tuple[Callable[[Mutant], list[str]] | None, MutantBound]:
    """(the covering tests of a mutant, on a suite slower than COVERING_SUITE_S with per-test coverage; the
    per-mutant bound), both noted in `stats` (`mutant_timeout_s`, and `mutant_cap_s` when the bound is derived
    below the setting's)."""
    covering = None
    cap_s = settings.search.mutant_timeout_s
    if where is not None and where.files and suite_s > COVERING_SUITE_S:
        def covering(mutant: Mutant) -> list[str]:
            return where.covering(mutant.path, mutant.line)

        cap_s = COVERING_TIMEOUT_FACTOR * cap_s  # the failing tests and their neighbours
        stats["with_covering"] = True
    slow_s = slow_tests_bound(where, failing, mutants, covering)
    cap_s = max(cap_s, slow_s)
    bound = MutantBound(hung_mutant_bound(cap_s, slow_s, baseline))  # while failing tests hang: seconds
    derived = derived_bound(where, failing, mutants, covering) if not hung(baseline) else None
    if where is not None and derived is not None and derived < bound.base_s:
        bound = MutantBound(derived, cap_s, _spent(where))
        stats["mutant_cap_s"] = round(cap_s, 1)
    stats["mutant_timeout_s"] = round(bound.base_s, 1)
    return covering, bound
