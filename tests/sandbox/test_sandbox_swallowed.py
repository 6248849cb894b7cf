"""A test that passes although its own assertion raised, swallowed by the code under test, is a failure.

The code under test swallows the test's `AssertionError` (or `pytest.fail`) in three ways: a `return` in the
`finally:` of a `@contextmanager`, an `__exit__` that returns True, a decorator with a broad `except`. Each such
test is reported failed, with the reason; an assertion the test expects (`pytest.raises`) or catches itself is
still a pass. Run through the real bubblewrap sandbox on a project's own venv: Python 3.8 (the tracer's
exception events) and 3.12 (`sys.monitoring`), each with pytest 8.3.5 (tests/old_python.py, built once).
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator

import pytest
from sandbox_support import make_backend

from agent_core.models import TestReport as Report
from agent_core.sandbox.bubblewrap import probe_bwrap
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.testing.runner import run_tests
from old_python import copy_venv_into

pytestmark = pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")

CODE = (
    "from contextlib import contextmanager\n\n\n"
    "@contextmanager\ndef session():\n    try:\n        yield 1\n    finally:\n        return\n\n\n"
    "class Quiet:\n    def __enter__(self):\n        return self\n\n"
    "    def __exit__(self, *exc):\n        return True\n\n\n"
    "def lenient(test):\n    def run(*args, **kwargs):\n        try:\n            test(*args, **kwargs)\n"
    "        except Exception:\n            pass\n    run.__wrapped__ = test\n    return run\n\n\n"
    "def add(a, b):\n    return a - b\n"
)
TESTS = (
    "import sys\nimport unittest\n\nimport pytest\n\nfrom calc import Quiet, add, lenient, session\n\n\n"
    "def test_in_contextmanager():\n    with session():\n        assert add(2, 1) == 3\n\n\n"  # lines 9-11
    "def test_in_exit():\n    with Quiet():\n        assert add(2, 1) == 3\n\n\n"
    "def test_fail_in_contextmanager():\n    with session():\n        pytest.fail('the sum is wrong')\n\n\n"
    "@lenient\ndef test_decorated():\n    assert add(2, 1) == 3\n\n\n"
    "class TestUnit(unittest.TestCase):\n    def test_method(self):\n        with session():\n"
    "            self.assertEqual(add(2, 1), 3)\n\n\n"
    "def test_expected():\n    with pytest.raises(AssertionError):\n        assert add(2, 1) == 3\n\n\n"
    "def test_caught_by_the_test():\n    try:\n        assert add(2, 1) == 3\n    except AssertionError:\n"
    "        pass\n\n\n"
    "def test_nothing_raised():\n    with session():\n        assert add(2, 0) == 2\n\n\n"
    "def test_interpreter():\n    assert sys.version_info[:2] == VERSION\n"
)
SWALLOWED = ["test_in_contextmanager", "test_in_exit", "test_fail_in_contextmanager", "test_decorated",
             "TestUnit::test_method"]
PASSING = ["test_expected", "test_caught_by_the_test", "test_nothing_raised", "test_interpreter"]


@pytest.fixture(scope="module", params=[("py3.8.18-pytest8.3.5", (3, 8)), ("py3.12.1-pytest8.3.5", (3, 12))],
                ids=["python3.8", "python3.12"])
def report(request: pytest.FixtureRequest) -> Iterator[Report]:
    venv, version = request.param
    base = make_temp_dir("swallowed")
    try:
        ws = base / "project"
        (ws / "tests").mkdir(parents=True)
        (ws / "calc.py").write_text(CODE)
        (ws / "tests" / "test_calc.py").write_text(TESTS.replace("VERSION", repr(version)))
        (ws / "pytest.ini").write_text("[pytest]\npythonpath = .\n")
        copy_venv_into(ws, venv)
        yield asyncio.run(run_tests(make_backend("bubblewrap"), ws, "pytest", timeout_s=120))
    finally:
        remove_temp_dir(base)


def test_a_swallowed_assertion_fails_the_test(report: Report) -> None:
    failures = {f.nodeid.split("::", 1)[1]: f for f in report.failures}
    assert sorted(failures) == sorted(SWALLOWED), report.output
    for name, failure in failures.items():
        assert failure.kind == "failure" and failure.file == "tests/test_calc.py"
        assert "but the test passed" in failure.message and "not a pass" in failure.message, (name, failure.message)
    assert "line 11 (AssertionError: assert 1 == 3)" in failures["test_in_contextmanager"].message
    assert "the `with` at line 10" in failures["test_in_contextmanager"].message
    assert failures["test_in_contextmanager"].line == 11, "located at the assertion that was swallowed"
    assert "(Failed: the sum is wrong)" in failures["test_fail_in_contextmanager"].message
    assert "a decorator, a wrapper" in failures["test_decorated"].message
    assert "1 != 3" in failures["TestUnit::test_method"].message


def test_an_expected_or_caught_assertion_still_passes(report: Report) -> None:
    assert report.passed == len(PASSING) and report.errors == 0, report.output
    assert {n.split("::", 1)[1] for n, o in report.outcomes.items() if o == "passed"} == set(PASSING)


def test_only_a_test_with_a_with_or_a_wrapper_is_watched(tmp_path) -> None:
    """The watch's tracer slows every call of a watched test before 3.12: a test whose assertion nothing but
    pytest stands behind (no `with` but one expecting an exception or one of the test framework's or the
    standard library's own managers, no wrapper) is not watched. Decided on pytest's own items, as they run."""
    from agent_core.testing.swallowed import needs_watch, test_code

    (tmp_path / "test_watch.py").write_text(
        "import unittest\nfrom contextlib import contextmanager\nfrom unittest import mock\n\nimport pytest\n\n\n"
        "def lenient(test):\n    def run():\n        test()\n    run.__wrapped__ = test\n    return run\n\n\n"
        "@contextmanager\ndef session():\n    yield\n\n\n"
        "class Patch:\n    def context(self):\n        return session()\n\n\n"
        "@pytest.fixture\ndef own():\n    return Patch()\n\n\n"
        "def test_plain():\n    assert 1\n\n\n"
        "def test_expects():\n    with pytest.raises(ValueError):\n        int('x')\n\n\n"
        "def test_open():\n    with open(__file__), pytest.warns(UserWarning):\n"
        "        __import__('warnings').warn('w')\n\n\n"
        "def test_patched(monkeypatch):\n    with mock.patch.object(Patch, 'context'), monkeypatch.context():\n"
        "        assert 1\n\n\n"
        "def test_session():\n    with session():\n        assert 1\n\n\n"
        "def test_fixture(own):\n    with own.context():\n        assert 1\n\n\n"
        "def test_mixed():\n    with open(__file__), session():\n        assert 1\n\n\n"
        "@lenient\ndef test_wrapped():\n    assert 1\n\n\n"
        "class Cases(unittest.TestCase):\n    def test_subtests(self):\n        for i in range(2):\n"
        "            with self.subTest(i=i):\n                self.assertTrue(i + 1)\n\n\n"
        "class Own(unittest.TestCase):\n    @contextmanager\n    def subTest(self, **params):\n        yield\n\n"
        "    def test_own_subtests(self):\n        with self.subTest(i=1):\n            self.assertTrue(1)\n"
    )
    watched: dict[str, bool] = {}

    class Record:
        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_call(self, item: pytest.Item) -> None:
            watched[item.name] = needs_watch(item, test_code(item))

    code = pytest.main([str(tmp_path), "-q", "-p", "no:cacheprovider"], plugins=[Record()])
    assert code == pytest.ExitCode.OK
    assert {name for name, on in watched.items() if on} == {
        "test_session", "test_fixture", "test_mixed", "test_wrapped", "test_own_subtests"}
    assert {name for name, on in watched.items() if not on} == {
        "test_plain", "test_expects", "test_open", "test_patched", "test_subtests"}


@pytest.mark.parametrize("by", ["items", "paths"])
def test_the_watch_reads_a_test_file_once_when_warmed(tmp_path, by: str) -> None:
    """The search's driver warms the watch before it forks a child per candidate (`warm`): the children use the
    parsed test file instead of parsing it again. Shown by removing the file after the warming: a test with
    nothing between its assertion and pytest is still known unwatched (an unread source would be watched)."""
    from agent_core.testing import swallowed

    path = tmp_path / f"test_warmed_{by}.py"  # a module name of its own: both runs are in this process
    path.write_text("def test_plain():\n    assert 1\n")
    watched: dict[str, bool] = {}

    class Warm:
        @pytest.hookimpl(trylast=True)
        def pytest_collection_finish(self, session: pytest.Session) -> None:
            swallowed.warm(session.items if by == "items" else (), [str(path)] if by == "paths" else ())
            path.unlink()

        @pytest.hookimpl(tryfirst=True)
        def pytest_runtest_call(self, item: pytest.Item) -> None:
            watched[item.name] = swallowed.needs_watch(item, swallowed.test_code(item))

    pytest.main([str(path), "-q", "-p", "no:cacheprovider"], plugins=[Warm()])
    assert watched == {"test_plain": False}
