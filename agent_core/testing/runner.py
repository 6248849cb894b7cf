"""Run a workspace's tests in a sandbox and return a structured `TestReport`.

A pytest command (`pytest ...`, `python -m pytest ...`) runs with the
sandbox's interpreter and writes JUnit XML into the workspace's `.agentls/`,
which `junit.py` parses into counts and located failures. Any other command
is judged by its exit code alone. A run that ends without XML (timeout, a
limit, a crash) is reported from the exit code and output, with `timed_out`
and `limit_hit` set. Failing tests are data: nothing here raises for them.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import xml.etree.ElementTree as ET
from pathlib import Path

from agent_core.models import TestReport
from agent_core.sandbox.base import CommandResult, Sandbox
from agent_core.testing.junit import parse_junit

OUTPUT_TAIL = 4000
_PYTHON_WORD = re.compile(r"^(.*/)?python(\d+(\.\d+)?)?$")
_counter = itertools.count(1)


def pytest_argv(test_command: str, python: str) -> tuple[bool, list[str]]:
    """(is_pytest, argv) for `test_command`, with a leading pytest/python word mapped to `python`."""
    words = shlex.split(test_command) or ["pytest"]
    head = words[0]
    if head in ("pytest", "py.test"):
        return True, [python, "-m", "pytest", *words[1:]]
    if _PYTHON_WORD.match(head):
        if words[1:3] == ["-m", "pytest"]:
            return True, [python, "-m", "pytest", *words[3:]]
        return False, [python, *words[1:]]
    return False, words


def pytest_options(junit_rel: str) -> list[str]:
    """What agentls adds to every pytest run."""
    return [
        f"--junitxml={junit_rel}",
        "-o", "junit_family=xunit1",
        "-p", "no:cacheprovider",
        "-q",
        "-o", "console_output_style=classic",
        "--continue-on-collection-errors",
    ]


def trim_output(result: CommandResult, limit: int = OUTPUT_TAIL) -> str:
    """The last `limit` characters of stdout followed by stderr (where the summary and crashes are)."""
    text = result.stdout.rstrip()
    if result.stderr.strip():
        text = f"{text}\n[stderr]\n{result.stderr.rstrip()}" if text else result.stderr.rstrip()
    return text if len(text) <= limit else "...\n" + text[-limit:]


async def run_tests(
    sandbox: Sandbox,
    workspace: Path,
    test_command: str = "pytest",
    timeout_s: float | None = None,
    extra_args: list[str] | tuple[str, ...] = (),
) -> TestReport:
    """Run `test_command` in `sandbox` on `workspace` (cwd) and report what happened."""
    workspace = Path(workspace).resolve()
    python = getattr(sandbox, "python", "python3")
    is_pytest, argv = pytest_argv(test_command, python)
    junit_path: Path | None = None
    made_dir = not (workspace / ".agentls").exists()
    if is_pytest:
        (workspace / ".agentls").mkdir(exist_ok=True)
        junit_rel = f".agentls/junit-{os.getpid()}-{next(_counter)}.xml"
        junit_path = workspace / junit_rel
        argv = [*argv, *pytest_options(junit_rel)]
    argv += list(extra_args)
    result = await sandbox.run(argv, workspace, timeout_s=timeout_s)
    try:
        report = _from_junit(junit_path, workspace) if junit_path else None
    finally:
        if junit_path is not None:
            junit_path.unlink(missing_ok=True)
            if made_dir:
                _remove_if_empty(junit_path.parent)
    if report is None:
        report = _from_exit_code(result, is_pytest)
    report.duration_s = result.duration_s
    report.timed_out = result.timed_out
    report.limit_hit = result.limit_hit
    report.exit_code = result.exit_code
    report.output = trim_output(result)
    report.backend = getattr(sandbox, "name", "")
    return report


def _from_junit(path: Path, workspace: Path) -> TestReport | None:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    try:
        return parse_junit(text, workspace)
    except ET.ParseError:
        return None


def _from_exit_code(result: CommandResult, is_pytest: bool) -> TestReport:
    """A report without per-test data: the run crashed, timed out, or is not pytest."""
    if result.exit_code == 0 and not result.timed_out:
        return TestReport(passed=1)
    if is_pytest or result.timed_out or result.exit_code is None:
        return TestReport(errors=1)
    return TestReport(failed=1)


def _remove_if_empty(directory: Path) -> None:
    """Leave the workspace as it was: drop the `.agentls/` dir this run created, when nothing else is in it."""
    try:
        directory.rmdir()
    except OSError:
        pass
