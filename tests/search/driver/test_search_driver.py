"""The in-sandbox driver on real projects in a real bubblewrap sandbox: per-test coverage, mutants, bounds."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.search.candidate import Mutant
from agent_core.search.driver.sandboxed import DRIVER_DIR, collect_coverage, try_mutants
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import shadowed

pytestmark = pytest.mark.e2e  # every test here runs a real sandbox

LOOP = {
    "spin.py": "def settle(n):\n    while n != 0:\n        n -= 2\n    return n\n\n\ndef twice(n):\n    return 2 * n\n",
    "test_spin.py": (
        "from spin import settle, twice\n\n\ndef test_odd_settles():\n    assert settle(3) == 0\n\n\n"
        "def test_even_settles():\n    assert settle(4) == 0\n\n\ndef test_twice():\n    assert twice(2) == 4\n"
    ),
}


@pytest.fixture
def root(tmp_path: Path):
    """A private copy of the LOOP project (the sandbox refuses the user's own files)."""
    with shadowed(tmp_path, LOOP) as copy:
        yield copy


def test_localize_run_bounds_a_looping_test_and_reports_per_test_lines(root: Path, sandbox):

    data = asyncio.run(collect_coverage(sandbox, root, [], timeout_s=60, test_timeout_s=2))

    assert data is not None and data["coverage"] is True
    assert data["outcomes"] == {
        "test_spin.py::test_odd_settles": "failed",
        "test_spin.py::test_even_settles": "passed",
        "test_spin.py::test_twice": "passed",
    }, "the loop was stopped by the per-test bound"
    assert data["files"]["spin.py"]["test_spin.py::test_odd_settles"] == [2, 3]
    assert data["files"]["spin.py"]["test_spin.py::test_twice"] == [8]
    assert not (root / DRIVER_DIR).exists(), "the driver leaves nothing in the workspace"


def test_mutants_run_in_forks_with_a_time_bound_and_leave_the_files_alone(root: Path, sandbox):
    mutants = [
        Mutant("spin.py", 3, "        n -= 4", "`2` -> `4`"),  # still loops on odd numbers
        Mutant("spin.py", 2, "    while n > 0:", "`!=` -> `>`"),  # ends, but settle(3) is -1
        Mutant("spin.py", 4, "    return 0", "returns 0"),  # never reached: the loop runs first
        Mutant("spin.py", 2, "    while n >= 2:", "the fix"),
        Mutant("spin.py", 2, "    while n >= 2", "does not parse"),
    ]

    results, stopped = asyncio.run(
        try_mutants(
            sandbox, root, ["test_spin.py::test_odd_settles"], mutants, mutant_timeout_s=1.5, budget_s=60, max_passing=3
        )
    )

    outcomes = [outcome for _, outcome in results]
    assert outcomes == ["timeout", "failed", "timeout", "failed", "failed"], (
        "settle(3) with `n >= 2` is 1: still failing; a mutant that does not parse fails"
    )
    assert stopped is None
    assert (root / "spin.py").read_text() == LOOP["spin.py"], "mutants are served to the import system, not written"
    assert not (root / DRIVER_DIR).exists()


def test_the_driver_stops_after_enough_passing_mutants_or_its_budget(root: Path, sandbox):
    fix = Mutant("spin.py", 2, "    while n > 1:", "`!=` -> `>`")
    spin = Mutant("spin.py", 3, "        n -= 0", "`2` -> `0`")

    enough = asyncio.run(
        try_mutants(
            sandbox,
            root,
            ["test_spin.py::test_even_settles"],
            [fix, fix, fix],
            mutant_timeout_s=5,
            budget_s=60,
            max_passing=2,
        )
    )
    budget = asyncio.run(
        try_mutants(
            sandbox,
            root,
            ["test_spin.py::test_even_settles"],
            [spin, spin, spin],
            mutant_timeout_s=1,
            budget_s=0.5,
            max_passing=2,
        )
    )

    assert [o for _, o in enough[0]] == ["passed", "passed"] and enough[1] == "enough"
    assert [o for _, o in budget[0]] == ["timeout"] and budget[1] == "budget"


def test_per_test_mode_records_every_test_of_every_mutant_with_bounds(root: Path, sandbox):
    from agent_core.search.driver.sandboxed import run_driver

    mutants = [
        {"id": 0, "path": "spin.py", "line": 8, "text": "    return 2 * n"},  # the original: a control
        {"id": 1, "path": "spin.py", "line": 2, "text": "    while n != 1:"},  # settle(4) loops: stopped per test
        {"id": 2, "path": "spin.py", "line": 8, "text": "    return 2 + n"},  # twice(2) is still 4
        {"id": 3, "path": "spin.py", "line": 8, "text": "    return 3 * n"},
    ]
    config = {"mode": "mutants", "per_test": True, "nodeids": ["test_spin.py"], "timeout_s": 30,
              "test_timeout_s": 1.0, "budget_s": 90, "max_passing": 10, "mutants": mutants}

    data = asyncio.run(run_driver(sandbox, root, config, timeout_s=150))

    assert data is not None and data["stopped"] is None
    tests = {r["id"]: r["tests"] for r in data["results"]}
    odd, even, twice = "test_spin.py::test_odd_settles", "test_spin.py::test_even_settles", "test_spin.py::test_twice"
    # settle(3) loops in the original too: its bound stops it in every child, the other tests still run
    assert tests[0] == {odd: "failed", even: "passed", twice: "passed"}
    assert tests[1] == {odd: "failed", even: "failed", twice: "passed"}, "settle(4) stopped by the per-test bound"
    assert tests[2] == {odd: "failed", even: "passed", twice: "passed"}
    assert tests[3] == {odd: "failed", even: "passed", twice: "failed"}
    assert all(r["outcome"] == "failed" for r in data["results"])
    assert (root / "spin.py").read_text() == LOOP["spin.py"] and not (root / DRIVER_DIR).exists()


GUARDED = {
    "guard.py": (
        "from contextlib import contextmanager\n\n\n@contextmanager\ndef guarded(strict=True):\n    try:\n"
        "        yield\n    except Exception:\n        if strict:\n            raise\n\n\ndef double(n):\n"
        "    return n + n + 1\n"
    ),
    "test_guard.py": (
        "from guard import double, guarded\n\n\ndef test_double():\n    with guarded():\n"
        "        assert double(2) == 4\n"
    ),
}


def test_a_mutant_that_swallows_the_tests_own_assertion_fails_in_the_driver(tmp_path: Path, sandbox):
    """`if strict:` -> `if not strict:` lets the `with` swallow the test's AssertionError: green for nothing. The
    driver judges it as agentls' own runs do (testing/swallowed.py): a failure; the real fix passes."""
    for rel, text in GUARDED.items():
        (tmp_path / rel).write_text(text)
    mutants = [Mutant("guard.py", 9, "        if not strict:", "swallows"), Mutant("guard.py", 14, "    return n + n",
                                                                                      "the fix")]
    with ShadowWorkspace(tmp_path) as shadow:
        results, _ = asyncio.run(try_mutants(sandbox, shadow.root, ["test_guard.py::test_double"], mutants,
                                             mutant_timeout_s=5, budget_s=60, max_passing=2, hot=True))

    assert [(m.description, outcome) for m, outcome in results] == [("swallows", "failed"), ("the fix", "passed")]
