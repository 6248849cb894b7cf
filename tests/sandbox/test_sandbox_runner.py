"""The test runner on real pytest runs in a real sandbox: counts, node ids, files and lines."""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest
from sandbox_support import make_backend

from agent_core.models import TestReport as Report
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.testing import channel
from agent_core.testing.runner import pytest_argv, run_tests

PROJECT = {
    "pkg/__init__.py": "",
    "pkg/calc.py": (
        "def helper(x):\n"
        "    value = x * 2\n"
        "    assert value == 5, 'helper says no'\n"
        "    return value\n"
        "\n\n"
        "def divide(a, b):\n"
        "    return a / b\n"
    ),
    "pkg/broken.py": "def ok():\n    return 1\ndef bad(:\n    pass\n",
    "tests/conftest.py": (
        "import pytest\n\n\n@pytest.fixture\ndef broken():\n    raise RuntimeError('fixture exploded')\n"
    ),
    "tests/test_calc.py": (
        "from pkg.calc import divide, helper\n"  # 1
        "\n\n"  # 2-3
        "def test_helper():\n"  # 4
        "    x = 1\n"  # 5
        "    helper(x)\n"  # 6
        "\n\n"  # 7-8
        "def test_body():\n"  # 9
        "    total = 1 + 1\n"  # 10
        "    assert total == 3\n"  # 11
        "\n\n"  # 12-13
        "def test_fixture(broken):\n"  # 14
        "    assert broken\n"  # 15
        "\n\n"  # 16-17
        "class TestMath:\n"  # 18
        "    def test_divide(self):\n"  # 19
        "        assert divide(1, 0) == 0\n"  # 20
        "\n\n"  # 21-22
        "def test_ok():\n"  # 23
        "    assert divide(4, 2) == 2\n"  # 24
    ),
    "tests/test_syntax.py": "import pkg.broken\n",
    "tests/test_missing.py": "\nimport pkg.missing\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)


@pytest.fixture(scope="module")
def report() -> Iterator[Report]:
    base = make_temp_dir("runner")
    try:
        ws = base / "project"
        _write(ws, PROJECT)
        result = asyncio.run(run_tests(make_backend("bubblewrap"), ws, "pytest", timeout_s=120))
        assert not (ws / ".agentls").exists(), "the junit file and the .agentls dir it needed are removed"
        yield result
    finally:
        remove_temp_dir(base)


def _by_id(report: Report) -> dict[str, object]:
    return {f.nodeid: f for f in report.failures}


def test_counts(report: Report) -> None:
    assert (report.passed, report.failed, report.errors) == (1, 3, 3), report.output
    assert report.exit_code == 1 and not report.timed_out and not report.ok
    assert report.backend == "bubblewrap"
    assert "3 failed, 1 passed, 3 errors" in report.output


@pytest.mark.parametrize(
    ("nodeid", "kind", "line", "source", "message_part"),
    [
        ("tests/test_calc.py::test_helper", "failure", 6, ("pkg/calc.py", 3), "helper says no"),
        ("tests/test_calc.py::test_body", "failure", 11, (None, None), "assert 2 == 3"),
        ("tests/test_calc.py::test_fixture", "error", 14, (None, None), "fixture exploded"),
        ("tests/test_calc.py::TestMath::test_divide", "failure", 20, ("pkg/calc.py", 8), "ZeroDivisionError"),
        ("tests/test_syntax.py", "error", 1, ("pkg/broken.py", 3), "SyntaxError"),
        ("tests/test_missing.py", "error", 2, (None, None), "ModuleNotFoundError"),
    ],
)
def test_failure_located(report: Report, nodeid, kind, line, source, message_part) -> None:
    failure = _by_id(report)[nodeid]
    assert failure.kind == kind
    assert failure.file == nodeid.split("::")[0]
    assert failure.line == line
    assert (failure.source_file, failure.source_line) == source
    assert message_part in failure.message
    assert failure.traceback


async def test_passing_run_on_the_process_backend(workspace: Path) -> None:
    _write(
        workspace, {"test_fine.py": "def test_a():\n    assert [1] == [1]\n\n\ndef test_b():\n    assert 2 * 2 == 4\n"}
    )
    report = await run_tests(make_backend("process"), workspace, "python -m pytest", timeout_s=120)
    assert (report.passed, report.failed, report.errors) == (2, 0, 0)
    assert report.ok and report.failures == [] and report.backend == "process"


async def test_timeout_without_xml(workspace: Path) -> None:
    _write(workspace, {"test_slow.py": "import time\n\n\ndef test_sleep():\n    time.sleep(60)\n"})
    report = await run_tests(make_backend("bubblewrap"), workspace, timeout_s=4)
    assert report.timed_out and not report.ok
    assert report.errors == 1 and report.passed == 0


async def test_non_pytest_command_counts_by_exit_code(workspace: Path) -> None:
    sandbox = make_backend("bubblewrap")
    ok = await run_tests(sandbox, workspace, "python -c 'print(42)'", timeout_s=30)
    bad = await run_tests(sandbox, workspace, "python -c 'raise SystemExit(3)'", timeout_s=30)
    assert (ok.passed, ok.failed, ok.exit_code, ok.output) == (1, 0, 0, "42")
    assert (bad.passed, bad.failed, bad.exit_code) == (0, 1, 3)


@pytest.mark.parametrize(
    ("command", "expected"),
    [
        ("pytest", (True, ["PY", "-m", "pytest"])),
        ("pytest -x tests", (True, ["PY", "-m", "pytest", "-x", "tests"])),
        ("python -m pytest -k foo", (True, ["PY", "-m", "pytest", "-k", "foo"])),
        ("python3.11 -m pytest", (True, ["PY", "-m", "pytest"])),
        ("python run_tests.py", (False, ["PY", "run_tests.py"])),
        ("make check", (False, ["make", "check"])),
    ],
)
def test_command_mapping(command: str, expected: tuple[bool, list[str]]) -> None:
    assert pytest_argv(command, "PY") == expected


async def test_junit_is_the_fallback_when_the_plugin_does_not_load(workspace: Path, monkeypatch) -> None:
    monkeypatch.setattr(channel, "plugin_name", lambda: "agentls_report_plugin")  # a name `-p no:` can block
    _write(
        workspace, {"test_one.py": "def test_good():\n    pass\n\n\ndef test_bad():\n    x = 2\n    assert x == 3\n"}
    )
    report = await run_tests(make_backend("bubblewrap"), workspace, "pytest -p no:agentls_report_plugin", timeout_s=60)
    assert (report.passed, report.failed) == (1, 1), report.output
    assert [(f.nodeid, f.line) for f in report.failures] == [("test_one.py::test_bad", 7)]
    assert report.slowest_pass_s is None, "per-test durations come from the plugin only"


async def test_addopts_with_cache_and_stepwise_options_still_run_the_whole_suite(workspace: Path) -> None:
    """A project's addopts naming the cache's selections and stepwise (common in real pytest configs) neither
    stop the run with a usage error nor cut it short at the first failure."""
    _write(workspace, {
        "pytest.ini": "[pytest]\naddopts = --lf --ff --sw -vvv --tb=native\n",
        "test_three.py": "def test_a():\n    assert len('a') == 2\n\n\ndef test_b():\n    assert len('ab') == 2\n\n\n"
                         "def test_c():\n    assert 'x' == 'y'\n",
    })
    report = await run_tests(make_backend("bubblewrap"), workspace, "pytest", timeout_s=120)
    assert (report.passed, report.failed, report.errors) == (1, 2, 0), report.output
    assert not (workspace / ".pytest_cache").exists() and not (workspace / ".agentls").exists()
