"""bench/aider_real.py's pure helpers on the output of a real pytest run over a small project (Aider not run)."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from bench.aider_compare import aider_argv
from bench.aider_real import (
    aider_files,
    aider_sent_tokens,
    changed_files,
    failure_reason,
    failure_report,
    is_test_file,
    markdown_table,
    named_module,
    project_sources,
    snapshot,
    traceback_files,
)

_HELPERS = "def half(n):\n    return n\n"  # the bug; the IndexError it causes is raised in core.py
_CORE = "from pkg.helpers import half\n\n\ndef middle(items):\n    return items[half(len(items))]\n"
_TESTS = """from pkg.core import middle
from pkg.helpers import half


def test_middle():
    assert middle([1, 2, 3, 4, 5, 6]) == 4


def test_half():
    assert half(10) == 5


def test_passes():
    assert half(0) == 0
"""


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    """A src-layout project whose suite has two failing tests; its `pytest -q -rfE --tb=short` output."""
    tree = tmp_path_factory.mktemp("proj")
    (tree / "src" / "pkg").mkdir(parents=True)
    (tree / "src" / "pkg" / "__init__.py").write_text("")
    (tree / "src" / "pkg" / "helpers.py").write_text(_HELPERS)
    (tree / "src" / "pkg" / "core.py").write_text(_CORE)
    (tree / "src" / "pkg" / "tests").mkdir()
    (tree / "src" / "pkg" / "tests" / "__init__.py").write_text("")
    (tree / "src" / "pkg" / "tests" / "test_core.py").write_text(_TESTS)
    (tree / ".venv" / "lib").mkdir(parents=True)
    (tree / ".venv" / "lib" / "site.py").write_text("")
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-rfE", "--tb=short", "-p", "no:cacheprovider",
                           "src"], cwd=tree, capture_output=True, text=True, timeout=120,
                          env={"PYTHONPATH": str(tree / "src"), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"})
    failing = sorted(line.split()[1] for line in proc.stdout.splitlines() if line.startswith("FAILED "))
    assert len(failing) == 2, proc.stdout
    return tree, proc.stdout, failing


def test_test_files_are_told_from_sources() -> None:
    assert is_test_file("tests/test_more.py") and is_test_file("pkg/conftest.py")
    assert is_test_file("toolz/tests/helpers.py") and is_test_file("pkg/thing_test.py")
    assert not is_test_file("more_itertools/more.py") and not is_test_file("src/dateutil/parser/_parser.py")


def test_sources_skip_tests_and_the_venv(project: tuple[Path, str, list[str]]) -> None:
    tree, _, _ = project
    assert project_sources(tree, "src") == ["src/pkg/__init__.py", "src/pkg/core.py", "src/pkg/helpers.py"]


def test_traceback_files_are_the_frames_pytest_printed(project: tuple[Path, str, list[str]]) -> None:
    tree, output, _ = project
    named = traceback_files(output, tree)
    assert "src/pkg/tests/test_core.py" in named and "src/pkg/core.py" in named
    assert "src/pkg/helpers.py" not in named  # half() returns a wrong value: no frame of it is printed


def test_a_test_file_names_its_module() -> None:
    sources = ["src/dateutil/parser/_parser.py", "src/dateutil/parser/isoparser.py", "src/dateutil/rrule.py"]
    assert named_module("tests/test_parser.py", sources) == ["src/dateutil/parser/_parser.py"]
    assert named_module("tests/test_rrule.py", sources) == ["src/dateutil/rrule.py"]
    assert named_module("tests/test_easter.py", sources) == []


def test_aider_gets_the_traced_and_named_sources_and_the_failing_tests(
        project: tuple[Path, str, list[str]]) -> None:
    tree, output, failing = project
    editable, read_only = aider_files(output, failing, tree, "src")
    assert editable == ["src/pkg/core.py"]  # traced; test_core.py names core.py too; helpers.py neither way
    assert read_only == ["src/pkg/tests/test_core.py"]


def test_the_report_keeps_the_failures_and_the_summary_within_budget(project: tuple[Path, str, list[str]]) -> None:
    _, output, failing = project
    report = failure_report(output)
    assert "FAILURES" in report and "short test summary info" in report
    assert all(node in report for node in failing)
    assert "IndexError" in report and "assert 10 == 5" in report
    short = failure_report(output, budget=80, summary_budget=60)
    assert "more failures cut" in short and len(short) < len(report)


def test_why_a_task_was_not_fixed() -> None:
    assert failure_reason(True, False, ["a.py"], "") == ""
    assert failure_reason(False, False, [], "Model x has hit a token limit!\npossibly exhausted context window!") \
        == "context overflow"
    assert failure_reason(False, True, ["a.py"], "") == "timeout (after an edit)"
    fetch = "HTTPSConnectionPool(host='raw.githubusercontent.com', port=443): Max retries exceeded with url"
    assert failure_reason(False, True, [], fetch) == "timeout (no answer from the server)"
    assert failure_reason(False, False, ["a.py"], "Applied edit to a.py") == "wrong edit"
    assert failure_reason(False, False, [], "Tokens: 2k sent, 300 received.") == "no edit"


def test_aider_sent_tokens_from_its_own_report() -> None:
    assert aider_sent_tokens("Tokens: 15k sent, 0 received.\nInput tokens: ~14,979 of 0 -- possibly") == 14979
    assert aider_sent_tokens("Tokens: 2.3k sent, 120 received.\nTokens: 900 sent, 12 received.") == 2300
    assert aider_sent_tokens("Aider v0.86.2\n") is None


def test_changed_files_from_snapshots(tmp_path: Path) -> None:
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 1\n")
    (tmp_path / ".venv").mkdir()
    (tmp_path / ".venv" / "c.py").write_text("")
    before = snapshot(tmp_path)
    assert set(before) == {"a.py", "b.py"}
    (tmp_path / "a.py").write_text("x = 2\n")
    (tmp_path / "new.py").write_text("")
    assert changed_files(before, snapshot(tmp_path)) == ["a.py", "new.py"]


def test_aider_argv_edits_the_sources_and_reads_the_tests() -> None:
    argv = aider_argv(Path("/v/bin/aider"), "http://127.0.0.1:1/v1", "m", "fix it", ["pkg/a.py"],
                      ["tests/test_a.py"], "python -m pytest -q", "whole")
    assert argv[0] == "/v/bin/aider" and argv[argv.index("--model") + 1] == "openai/m"
    assert argv[argv.index("--edit-format") + 1] == "whole" and "--auto-test" in argv
    assert argv[argv.index("--test-cmd") + 1] == "python -m pytest -q"
    assert argv[-3:] == ["pkg/a.py", "--read", "tests/test_a.py"]


def test_the_table_has_a_row_per_task_and_the_totals() -> None:
    rows = [{"task": "toolz/nth", "fixed": False, "reason": "context overflow", "tokens": 0, "llm_calls": 1,
             "wall_s": 75.4, "aider_tail": "Input tokens: ~14,979 of 0"},
            {"task": "boltons/x", "fixed": True, "reason": "", "tokens": 1200, "llm_calls": 2, "wall_s": 30.0,
             "aider_sent": 3000}]
    table = markdown_table(rows).splitlines()
    assert table[2] == "| toolz/nth | not fixed | context overflow | ~14,979 | 0 | 1 | 75 s | (lead) |"
    assert table[3] == "| boltons/x | fixed | - | ~3,000 | 1,200 | 2 | 30 s | (lead) |"
    assert table[4].startswith("| **total (2 tasks)** | **1/2** |") and "**1,200**" in table[4]
