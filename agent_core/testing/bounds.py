"""Time bounds of a candidate's whole-suite run, shared by the search's verification and the patch check.

A correct change leaves the suite about as fast as the baseline found it: a run that loops or crawls is cut
after a multiple of the baseline's time instead of costing the run's whole timeout.
"""

from __future__ import annotations

from agent_core.models import TestReport
from agent_core.settings import Settings
from agent_core.testing.runner import per_test_bound

VERIFY_SLOWDOWN = 4  # a candidate's whole-suite run may take this many times the baseline's (plus VERIFY_MIN_S) ...
VERIFY_MIN_S = 30.0  # ... and at least this long: a loaded machine slows every run


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
