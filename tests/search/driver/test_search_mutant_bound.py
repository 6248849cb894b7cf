"""The per-mutant bound (search/driver/mutant_bound.py): under the setting's cap, what the child's tests took while
localizing; a failing test counts as its file's slowest passing test, the run's slowest test counts once more, a
hung test counts as none; the bound grows for the tests that refused earlier candidates, up to the cap."""

from __future__ import annotations

import pytest

from agent_core import models
from agent_core.search.candidate import Mutant
from agent_core.search.driver.localizing import Localization
from agent_core.search.driver.mutant_bound import (
    SLOW_TEST_FACTOR,
    MutantBound,
    derived_bound,
    per_mutant,
)
from agent_core.search.evidence.hangs import MIN_MUTANT_S
from agent_core.search.front import SearchStats
from agent_core.settings import Settings
from agent_core.testing.results import HUNG_MARK

MUTANT = Mutant("calc.py", 2, "    return a + b", "`-` -> `+`")


def _where(durations: dict[str, float], outcomes: dict[str, str], bound_s: float = 0.0) -> Localization:
    return Localization([], "coverage", [t for t, o in outcomes.items() if o == "failed"], {}, outcomes, durations,
                        bound_s)


def test_a_failing_test_counts_as_its_file_s_slowest_passing_test_and_the_run_s_slowest_once_more():
    where = _where({"t.py::test_fails": 0.01, "t.py::test_sibling": 0.4, "u.py::test_fixture": 0.6},
                   {"t.py::test_fails": "failed", "t.py::test_sibling": "passed", "u.py::test_fixture": "passed"})

    bound = derived_bound(where, ["t.py::test_fails"], [MUTANT], None)

    assert bound == pytest.approx(SLOW_TEST_FACTOR * (0.4 + 0.6) + 1.0), \
        "stopped at its first assertion, the failing test may run as long as its sibling once fixed"


def test_fast_tests_get_the_least_bound_and_covering_tests_add_their_time():
    outcomes = {"t.py::test_fails": "failed", "t.py::test_a": "passed", "t.py::test_b": "passed"}
    where = _where({"t.py::test_fails": 0.01, "t.py::test_a": 0.02, "t.py::test_b": 0.03}, outcomes)
    assert derived_bound(where, ["t.py::test_fails"], [MUTANT], None) == MIN_MUTANT_S

    slow = _where({"t.py::test_fails": 0.01, "t.py::test_a": 1.0, "t.py::test_b": 2.0}, outcomes)
    alone = derived_bound(slow, ["t.py::test_fails"], [MUTANT], None)
    covered = derived_bound(slow, ["t.py::test_fails"], [MUTANT], lambda mutant: ["t.py::test_a", "t.py::test_b"])
    assert alone == pytest.approx(SLOW_TEST_FACTOR * (2.0 + 2.0) + 1.0)
    assert covered == pytest.approx(alone + SLOW_TEST_FACTOR * 3.0)


def test_a_test_the_localizing_bound_cut_counts_as_none_and_an_untimed_failing_test_derives_nothing():
    where = _where({"t.py::test_fails": 0.01, "t.py::test_loops": 10.0, "t.py::test_ok": 0.5},
                   {"t.py::test_fails": "failed", "t.py::test_loops": "failed", "t.py::test_ok": "passed"},
                   bound_s=10.0)
    assert derived_bound(where, ["t.py::test_fails"], [MUTANT], None) == pytest.approx(SLOW_TEST_FACTOR * 1.0 + 1.0)
    assert derived_bound(where, ["t.py::test_other"], [MUTANT], None) is None
    assert derived_bound(None, ["t.py::test_fails"], [MUTANT], None) is None


def test_the_setting_caps_the_derived_bound_and_tests_slower_than_it_keep_theirs():
    settings = Settings()
    cap = settings.search.mutant_timeout_s
    fast = _where({"t.py::test_fails": 0.01, "t.py::test_ok": 0.02}, {"t.py::test_fails": "failed",
                                                                      "t.py::test_ok": "passed"})
    stats: dict = {}
    covering, bound = per_mutant(settings, fast, 1.0, ["t.py::test_fails"], [MUTANT], None, stats)
    assert covering is None and bound.base_s == MIN_MUTANT_S < cap and bound.cap_s == cap
    assert stats == {"mutant_timeout_s": MIN_MUTANT_S, "mutant_cap_s": cap}
    assert SearchStats.of(stats).as_dict()["mutant_cap_s"] == cap, "the journal's `search` record takes the figure"

    slow = _where({"t.py::test_fails": 3.0, "t.py::test_ok": 0.02}, {"t.py::test_fails": "failed",
                                                                     "t.py::test_ok": "passed"})
    stats = {}
    _, bound = per_mutant(settings, slow, 1.0, ["t.py::test_fails"], [MUTANT], None, stats)
    assert bound == MutantBound(SLOW_TEST_FACTOR * 3.0 + 1.0), "the slow test's own bound, above the setting"
    assert "mutant_cap_s" not in stats


def test_while_failing_tests_hang_the_hang_s_bound_has_the_say():
    where = _where({"t.py::test_fails": 0.01, "t.py::test_ok": 0.02}, {"t.py::test_fails": "failed",
                                                                       "t.py::test_ok": "passed"})
    baseline = models.TestReport(failed=1, slowest_pass_s=0.3, failures=[models.TestFailure(
        nodeid="t.py::test_fails", file="t.py", line=3, message=f"{HUNG_MARK}: stopped here")])
    _, bound = per_mutant(Settings(), where, 1.0, ["t.py::test_fails"], [MUTANT], baseline, {})
    assert bound.cap_s == 0 and bound.base_s == pytest.approx(SLOW_TEST_FACTOR * 0.01 + 1.0 + 10 * 0.3), \
        "the failing test's own bound plus 10 x the slowest passing test for the hung one (evidence/hangs.py)"


def test_the_bound_grows_for_the_refusing_tests_up_to_the_cap():
    derived = MutantBound(2.0, 5.0, {"t.py::test_a": 0.2, "t.py::test_b": 1.0})
    assert derived.with_tests([]) == 2.0
    assert derived.with_tests(["t.py::test_a"]) == pytest.approx(2.0 + SLOW_TEST_FACTOR * 0.2)
    assert derived.with_tests(["t.py::test_a", "t.py::test_b"]) == 5.0, "capped"
    assert MutantBound(5.0).with_tests(["t.py::test_b"]) == 5.0, "the setting's bound does not grow"
