"""The time bounds of a candidate's whole-suite run (testing/bounds.py), shared by the search and verify_patch."""

from __future__ import annotations

from agent_core.models import TestReport
from agent_core.settings import load_settings
from agent_core.testing.bounds import VERIFY_MIN_S, VERIFY_SLOWDOWN, verify_bounds


def test_a_mutants_whole_suite_run_is_bounded_by_the_baselines_time():
    settings = load_settings(None)
    baseline = TestReport(passed=100, failed=1, duration_s=20.0, slowest_pass_s=0.5)
    timeout, bound = verify_bounds(settings, baseline)
    assert timeout == VERIFY_SLOWDOWN * 20.0 + VERIFY_MIN_S < settings.sandbox.timeout_s
    assert bound == 5.0, "10x the slowest passing test: a mutant that makes one test loop is cut in seconds"
    assert verify_bounds(settings, None) == (settings.sandbox.timeout_s, None)
