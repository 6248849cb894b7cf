"""The search driver under a project's own pytest options, and when it fails, in a real bubblewrap sandbox.

The driver once ran pytest with `-p no:terminal` and `-p no:cacheprovider`: a project whose addopts name
`-vvv`, `--tb=native`, `-r`, `--color`, `--durations` or `--ff` made every driver run a usage error, and
the search reported `tried: 0` with nobody told. Now those options parse and do nothing to the driver,
and a driver that ends before any test or mutant ran says why, with pytest's own words.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.search.candidate import Mutant
from agent_core.search.driver.sandboxed import collect_coverage, try_mutants
from agent_core.search.inside import driver_trace
from engine_support import shadowed

PROJECT = {
    "pytest.ini": "[pytest]\naddopts = -vvv --tb=native -rA --color=yes --durations=5 --ff --sw\n",
    "clamp.py": (
        "def clamp(x, lo, hi):\n    if x < lo:\n        return lo\n    if x > hi:\n        return x\n    return x\n"
    ),
    "test_clamp.py": (
        "from clamp import clamp\n\n\ndef test_high():\n    assert clamp(9, 0, 5) == 5\n\n\n"
        "def test_low():\n    assert clamp(-1, 0, 5) == 0\n\n\ndef test_mid():\n    assert clamp(3, 0, 5) == 3\n"
    ),
}


@pytest.fixture
def root(tmp_path: Path):
    with shadowed(tmp_path, PROJECT) as copy:
        yield copy


@pytest.mark.e2e
def test_terminal_and_cache_addopts_neither_break_nor_stop_the_localizing_run(root: Path, sandbox) -> None:
    data = asyncio.run(collect_coverage(sandbox, root, [], timeout_s=60, test_timeout_s=10))

    assert "error" not in data, data.get("error")
    assert data["outcomes"] == {"test_clamp.py::test_high": "failed", "test_clamp.py::test_low": "passed",
                                "test_clamp.py::test_mid": "passed"}, "--sw did not stop at the first failure"
    assert data["files"]["clamp.py"]["test_clamp.py::test_high"] == [2, 4, 5]
    assert data["recorder"].startswith("coverage.py ")


@pytest.mark.e2e
def test_terminal_and_cache_addopts_do_not_stop_the_mutants(root: Path, sandbox) -> None:
    mutants = [Mutant("clamp.py", 5, "        return lo", "`x` -> `lo`"),
               Mutant("clamp.py", 5, "        return hi", "`x` -> `hi`")]

    for hot in (False, True):
        results, stopped = asyncio.run(try_mutants(sandbox, root, ["test_clamp.py::test_high"], mutants,
                                                   mutant_timeout_s=20, budget_s=60, max_passing=1, hot=hot))

        assert [outcome for _, outcome in results] == ["failed", "passed"] and stopped == "enough", (hot, stopped)


@pytest.mark.e2e
def test_a_driver_that_ends_before_any_test_says_why(root: Path, sandbox) -> None:
    data = asyncio.run(collect_coverage(sandbox, root, ["--no-such-option"], timeout_s=60, test_timeout_s=10))

    assert not data.get("outcomes") and "pytest exited with status 4 before running any test" in data["error"]
    assert "unrecognized arguments: --no-such-option" in data["error"], "pytest's own words come with it"

    mutant = Mutant("clamp.py", 5, "        return hi", "`x` -> `hi`")
    results, stopped = asyncio.run(try_mutants(sandbox, root, ["test_gone.py::test_x"], [mutant],
                                               mutant_timeout_s=20, budget_s=60, max_passing=1))

    assert results == [] and stopped is not None
    assert stopped.startswith("error: pytest ended with status 4 (a usage error) for every mutant: none was tried")


def test_the_line_tracer_records_what_coverage_records(tmp_path: Path) -> None:
    """The tracer used where coverage.py cannot run gives the lines coverage.py gives, per context."""
    (tmp_path / "spin.py").write_text(
        "def settle(n):\n    while n > 1:\n        n -= 2\n    return n\n\n\ndef twice(n):\n    return 2 * n\n")
    code = compile((tmp_path / "spin.py").read_text(), str(tmp_path / "spin.py"), "exec")
    space: dict = {}
    exec(code, space)  # the test's own module, to be traced
    tracer = driver_trace.LineTracer(str(tmp_path))

    tracer.start()
    try:
        tracer.switch_context("t::odd")
        space["settle"](3)
        tracer.switch_context("t::twice")
        space["twice"](2)
        tracer.switch_context("")
    finally:
        tracer.stop()

    assert tracer.measured(str(tmp_path)) == {"spin.py": {"t::odd": [2, 3, 4], "t::twice": [8]}}
