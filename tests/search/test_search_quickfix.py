"""The background search's engine part on a real workspace in a real bubblewrap sandbox: found, verified, described."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.models import TestReport
from agent_core.quickfix import find_quick_fix
from agent_core.sandbox.factory import make_sandbox
from agent_core.search.driver.describe import describe_change
from agent_core.settings import SandboxSettings, SearchSettings, Settings
from agent_core.testing.runner import run_tests
from agent_core.workspace.changeset import apply_change_set
from agent_core.workspace.shadow import ShadowWorkspace

COUNT = (
    'def count_up(n):\n    """1, 2, ..., n."""\n    return list(range(1, n))\n\n\ndef double(x):\n    return 2 * x\n'
)
TESTS = (
    "from count import count_up, double\n\n\ndef test_count_up():\n    assert count_up(3) == [1, 2, 3]\n\n\n"
    "def test_empty():\n    assert count_up(0) == []\n\n\ndef test_double():\n    assert double(4) == 8\n"
)


@pytest.mark.parametrize(
    "source, line, after, expected",
    [
        (
            "def f(n):\n    return list(range(1, n))\n",
            2,
            "    return list(range(1, n + 1))",
            "`range(1, n)` -> `range(1, n + 1)`",
        ),
        ("def f(i, n):\n    while i < n:\n        i += 1\n", 2, "    while i <= n:", "`i < n` -> `i <= n`"),
        ("def add(a, b):\n    return a + c\n", 2, "    return a + b", "`a + c` -> `a + b`"),
        ("def f(xs):\n    return xs[len(xs)]\n", 2, "    return xs[len(xs) - 1]", "`len(xs)` -> `len(xs) - 1`"),
        ("def f():\n    return True\n", 2, "    return False", "`return True` -> `return False`"),
        ("def f(n):\n    return g(n)\n", 2, "    if n < 0:\n        return n\n    return g(n)", "base case added"),
    ],
)
def test_a_change_is_shown_inside_the_smallest_expression_around_it(source, line, after, expected):
    assert describe_change(source, line, after, "base case added") == expected


def _workspace(root: Path) -> Path:
    root.mkdir()
    (root / "count.py").write_text(COUNT)
    (root / "test_count.py").write_text(TESTS)
    return root


@pytest.mark.e2e
def test_a_one_token_bug_comes_back_as_a_verified_fix_and_the_workspace_is_untouched(tmp_path: Path):
    root = _workspace(tmp_path / "ws")
    settings = Settings(
        sandbox=SandboxSettings(backend="bubblewrap", timeout_s=120), search=SearchSettings(enabled=True)
    )
    report = _report(settings, root)
    assert report.failed == 1 and report.passed == 2

    outcome = asyncio.run(find_quick_fix(settings, root, {}, report))

    fix = outcome.fix
    assert fix is not None, outcome.stats
    assert (fix.file, fix.line, fix.function) == ("count.py", 3, "count_up")
    assert fix.change == "`range(1, n)` -> `range(1, n + 1)`"
    assert fix.title == "Apply verified fix: `range(1, n)` -> `range(1, n + 1)` in count_up (3 tests pass)"
    assert fix.failing == ["test_count.py::test_count_up"] and fix.report.ok
    assert (root / "count.py").read_text() == COUNT, "the search never writes the workspace"
    apply_change_set(root, fix.change_set)
    assert _report(settings, root).ok


@pytest.mark.e2e
def test_unsaved_buffers_are_what_is_searched(tmp_path: Path):
    root = _workspace(tmp_path / "ws")
    fixed = COUNT.replace("range(1, n)", "range(1, n + 1)")
    (root / "count.py").write_text(COUNT)  # on disk: the range bug
    settings = Settings(
        sandbox=SandboxSettings(backend="bubblewrap", timeout_s=120), search=SearchSettings(enabled=True)
    )
    overlays = {"count.py": fixed.replace("2 * x", "3 * x")}  # in the editor: that one fixed, another made
    with_overlay = _report(settings, root, overlays)

    fix = asyncio.run(find_quick_fix(settings, root, overlays, with_overlay)).fix

    assert fix is not None and fix.function == "double" and fix.change == "`3 * x` -> `2 * x`"
    (change,) = fix.change_set.changes
    assert change.original == overlays["count.py"]


def _report(settings: Settings, root: Path, overlays: dict[str, str] | None = None) -> TestReport:
    """The suite's report on `root` with `overlays`, run on a private copy like any run."""
    with ShadowWorkspace(root, overlays) as shadow:
        return asyncio.run(run_tests(make_sandbox(settings), shadow.root, "pytest", 120))
