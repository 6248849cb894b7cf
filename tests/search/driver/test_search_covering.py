"""On a slow suite, each mutant runs the failing tests and then the passing tests that cover its line.

Real bubblewrap sandbox, real per-test coverage: the wrong mutant (`x * 3`) passes the failing test but
breaks a passing test that runs the same line, and is turned away in the mutants' own sandboxed run,
before any run of the whole suite; the right one (`x ** 2`) is then verified against the whole suite.
On a fast suite the whole suite is the check (and the wrong mutant costs one run of it).
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from agent_core import models
from agent_core.sandbox.base import Sandbox
from agent_core.sandbox.factory import make_sandbox
from agent_core.search.candidate import Mutant
from agent_core.search.driver.localizing import localize_failure
from agent_core.search.driver.single_edit import find_single_edit
from agent_core.settings import Settings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace

SQUARE = {
    "square.py": "def square(x):\n    return x * 2\n\n\ndef cube(x):\n    return x * x * x\n",
    "test_square.py": (
        "from square import cube, square\n\n\ndef test_three():\n    assert square(3) == 9\n\n\n"
        "def test_two():\n    assert square(2) == 4\n\n\ndef test_cube():\n    assert cube(2) == 8\n"
    ),
}


@dataclass
class Deps:
    settings: Settings
    sandbox: Sandbox
    shadow: ShadowWorkspace
    run_tests: Any
    suite_runs: int = 0


@pytest.fixture
def deps(tmp_path: Path):
    for rel, text in SQUARE.items():
        (tmp_path / rel).write_text(text)
    settings = Settings.model_validate({"test_command": "pytest -q", "sandbox": {"backend": "bubblewrap"}})
    with ShadowWorkspace(tmp_path) as shadow:
        holder = Deps(settings, make_sandbox(settings.sandbox), shadow, None)

        async def counted(*args: Any, **kwargs: Any) -> models.TestReport:
            holder.suite_runs += 1
            return await run_tests(*args, **kwargs)

        holder.run_tests = counted
        yield holder


def _mutants() -> list[Mutant]:
    return [
        Mutant("square.py", 2, "    return x * 3", "2 -> 3"),
        Mutant("square.py", 2, "    return x ** 2", "* -> **"),
    ]


@pytest.mark.e2e  # a real sandbox
def test_a_mutant_breaking_a_covering_test_never_reaches_the_whole_suite(deps: Deps):
    async def go():
        baseline = await deps.run_tests(deps.sandbox, deps.shadow.root, deps.settings.test_command, 60)
        where = await localize_failure(deps, baseline)
        assert where.evidence == "coverage"
        assert where.covering("square.py", 2) == ["test_square.py::test_two"]
        return await find_single_edit(deps, where.failing, _mutants(), where, suite_s=30.0)

    winner, report, stats = asyncio.run(go())
    assert winner is not None and winner.text == "    return x ** 2"
    assert report is not None and report.ok and report.passed == 3
    assert stats["with_covering"] and stats["tried"] == 2 and stats["passed_failing"] == 1
    assert deps.suite_runs == 2, "the baseline and the one verifying run of the right mutant"
    assert "x ** 2" in (deps.shadow.root / "square.py").read_text()


@pytest.mark.e2e  # a real sandbox
def test_a_fast_suite_goes_straight_to_the_whole_suite(deps: Deps):
    async def go():
        baseline = await deps.run_tests(deps.sandbox, deps.shadow.root, deps.settings.test_command, 60)
        where = await localize_failure(deps, baseline)
        return await find_single_edit(deps, where.failing, _mutants(), where, suite_s=1.0)

    winner, report, stats = asyncio.run(go())
    assert winner is not None and winner.text == "    return x ** 2"
    assert "with_covering" not in stats and stats["passed_failing"] == 2
    assert deps.suite_runs == 3, "the baseline, the wrong mutant's suite run and the right one's"
    assert (deps.shadow.root / "square.py").read_text().count("x ** 2") == 1


@pytest.mark.e2e  # a real sandbox, real per-test coverage
def test_a_test_that_fails_only_under_the_line_recorder_is_not_a_failing_test(deps: Deps):
    """A test that passed before any change but fails while localizing (here: it checks that no tracer is set,
    as a timing-sensitive test can fail under coverage's slowdown) says nothing: its outcome is `unsure`, not
    one of the failing tests every candidate must then pass (a correct candidate of more-itertools ran 15 s of
    such tests and was cut by its 10 s bound)."""
    (deps.shadow.root / "test_untraced.py").write_text(
        "import sys\n\n\ndef test_untraced():\n    assert sys.gettrace() is None\n")

    async def go():
        baseline = await deps.run_tests(deps.sandbox, deps.shadow.root, deps.settings.test_command, 60)
        return baseline, await localize_failure(deps, baseline)

    baseline, where = asyncio.run(go())
    assert [f.nodeid for f in baseline.failures] == ["test_square.py::test_three"]
    assert where.evidence == "coverage"
    assert where.failing == ["test_square.py::test_three"]
    assert where.outcomes["test_untraced.py::test_untraced"] == "unsure"
    assert where.suspects[0].file == "square.py"
