"""failure_text on real reports from a real sandboxed pytest run: only the workspace's own frames remain."""

from __future__ import annotations

import asyncio
import sys

import pytest

from agent_core.agents.reflector.signatures import failure_text, is_internal_path
from agent_core.models import TestReport
from agent_core.sandbox.bubblewrap import BubblewrapSandbox
from agent_core.settings import SandboxSettings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import make_project

BROKEN = {
    "calendar_rules.py": "def is_leap(y):\n    return y % 4 == 0 and (y % 100 == 0\n",
    "test_cal.py": "from calendar_rules import is_leap\n\n\ndef test_leap():\n    assert is_leap(2024)\n",
    "pkg/__init__.py": "",
    "pkg/indent.py": "def f():\n  x = 1\n    return x\n",
    "pkg/core.py": 'def helper(x):\n    return x.upper()\n\n\ndef shout(x):\n    return helper(x) + "!"\n',
    "tests/test_ind.py": "import pkg.indent\n\n\ndef test_y():\n    pass\n",
    "tests/test_imp.py": "from pkg.missing import nothing\n\n\ndef test_x():\n    pass\n",
    "pkg/rec.py": "def fib(n):\n    if n == 1:\n        return 1\n    return fib(n - 1) + fib(n - 2)\n",
    "tests/test_rec.py": "from pkg.rec import fib\n\n\ndef test_fib():\n    assert fib(0) == 0\n",
    "tests/test_list.py": "def test_tail():\n    assert [[1, 2], [3, 4]] == [[1, 2], [3, 4], [5]]\n",
    "tests/test_core.py": (
        "import pytest\n\nfrom pkg.core import shout\n\n\n"
        '@pytest.mark.parametrize("v", [1, 2])\ndef test_bad(v):\n    assert shout(v) == "1!"\n'
    ),
}
INTERNAL_MARKS = ("_pytest", "importlib", "<frozen", "agentls-site", "/usr/lib", "site-packages", "???")


@pytest.fixture(scope="module")
def report(tmp_path_factory: pytest.TempPathFactory) -> TestReport:
    """One real bubblewrap-sandboxed pytest run over the broken project."""
    source = make_project(tmp_path_factory.mktemp("broken") / "proj", BROKEN)
    with ShadowWorkspace(source) as shadow:
        # agentls' own interpreter: the expected texts follow its pytest's formatting
        sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=60, python=sys.executable))
        return asyncio.run(run_tests(sandbox, shadow.root, "pytest", timeout_s=60))


def only(report: TestReport, nodeid_prefix: str) -> TestReport:
    """The real report narrowed to the failures of one test file."""
    failures = [f for f in report.failures if f.nodeid.startswith(nodeid_prefix)]
    assert failures, [f.nodeid for f in report.failures]
    return TestReport(failed=len(failures), failures=failures, exit_code=report.exit_code)


def test_the_raw_report_does_carry_the_internal_frames(report: TestReport):
    syntax = only(report, "test_cal.py").failures[0]
    assert "_pytest/python.py" in syntax.traceback and "<frozen importlib._bootstrap>" in syntax.traceback
    assert "site-packages/_pytest/" in syntax.traceback


def test_a_syntax_error_keeps_the_workspace_frame_source_line_and_caret(report: TestReport):
    assert failure_text(only(report, "test_cal.py")) == (
        "ERROR collecting test_cal.py\n"
        "test_cal.py:1: in <module>\n"
        "    from calendar_rules import is_leap\n"
        'E     File "calendar_rules.py", line 2\n'
        "E       return y % 4 == 0 and (y % 100 == 0\n"
        "E                             ^\n"
        "E   SyntaxError: '(' was never closed"
    )


def test_an_indentation_error_names_the_file_relative_to_the_workspace(report: TestReport):
    assert failure_text(only(report, "tests/test_ind.py")) == (
        "ERROR collecting tests/test_ind.py\n"
        "tests/test_ind.py:1: in <module>\n"
        "    import pkg.indent\n"
        'E     File "pkg/indent.py", line 3\n'
        "E       return x\n"
        "E   IndentationError: unexpected indent"
    )


def test_an_import_error_drops_the_hint_and_importlib(report: TestReport):
    assert failure_text(only(report, "tests/test_imp.py")) == (
        "ERROR collecting tests/test_imp.py\n"
        "tests/test_imp.py:1: in <module>\n"
        "    from pkg.missing import nothing\n"
        "E   ModuleNotFoundError: No module named 'pkg.missing'"
    )


def test_a_failure_deep_in_the_source_keeps_each_workspace_frame(report: TestReport):
    assert failure_text(only(report, "tests/test_core.py")) == (
        "FAILED tests/test_core.py::test_bad[1] at tests/test_core.py:8 (and 1 more case(s) of this test)\n"
        '>       assert shout(v) == "1!"\n'
        "pkg/core.py:6: in shout\n"
        '    return helper(x) + "!"\n'
        ">       return x.upper()\n"
        "E       AttributeError: 'int' object has no attribute 'upper'\n"
        "pkg/core.py:2: AttributeError"
    )


def test_a_recursion_shows_the_repeated_frame_once(report: TestReport):
    text = failure_text(only(report, "tests/test_rec.py"))
    assert text.startswith(
        "FAILED tests/test_rec.py::test_fib at tests/test_rec.py:5\n"
        ">       assert fib(0) == 0\n"
        "pkg/rec.py:4: in fib\n"
        "    return fib(n - 1) + fib(n - 2)\n"
        "    (the frame above repeats 17 more time(s))\n"
    ), text
    # the innermost frame: the recursive call's line, or (before Python 3.12, where the sandbox's watch for
    # swallowed assertions keeps a trace function set: testing/swallowed.py) the def the limit was hit entering
    last = text.split("(the frame above repeats 17 more time(s))\n", 1)[1].splitlines()
    assert last[0] in (">       return fib(n - 1) + fib(n - 2)", ">   def fib(n):"), text
    assert "RecursionError: maximum recursion depth exceeded" in last[1] and last[-1].endswith(": RecursionError")
    assert text.count("return fib(n - 1) + fib(n - 2)") <= 2, "the repeated frame is shown once, not 17 times"


def test_the_whole_text_has_no_internal_frame_and_is_short(report: TestReport):
    text = failure_text(report)
    assert [mark for mark in INTERNAL_MARKS if mark in text] == []
    raw = sum(len(f.traceback) for f in report.failures)
    assert text.count("\nE ") >= 3 and len(text) * 3 < raw, (len(text), raw)


@pytest.mark.parametrize(
    ("path", "internal"),
    [
        ("/var/tmp/agentls-site-e6234f2d5195cbba/_pytest/python.py", True),
        ("/usr/lib/python3.11/importlib/__init__.py", True),
        ("<frozen importlib._bootstrap>", True),
        ("/root/.pyenv/versions/3.11.7/lib/python3.11/asyncio/runners.py", True),
        ("/opt/venv/lib/python3.12/site-packages/requests/api.py", True),
        ("/usr/lib/python3/dist-packages/yaml/__init__.py", True),
        ("_pytest/assertion/rewrite.py", True),
        ("pkg/core.py", False),
        ("tests/test_core.py", False),
        ("/tmp/agentls-shadow-1234/ws/calc.py", False),
    ],
)
def test_internal_paths(path: str, internal: bool):
    assert is_internal_path(path) is internal


def test_workspace_modules_with_internal_looking_names_stay():
    # a workspace module called importlib_helpers.py is the user's own, not importlib's
    assert is_internal_path("importlib_helpers.py") is False
    assert is_internal_path("src/mypytest/_pytest_plugin.py") is False


def test_an_assertion_diff_keeps_the_diff_and_drops_pytests_advice(report: TestReport):
    raw = only(report, "tests/test_list.py").failures[0].traceback
    assert "Use -v to get more diff" in raw
    text = failure_text(only(report, "tests/test_list.py"))
    assert "Right contains one more item: [5]" in text
    assert "Use -v" not in text
