"""Run a workspace's tests in a sandbox and return a structured `TestReport`.

Every run loads our pytest plugin (`pytest_plugin.py`) through the
environment: the module is copied into a per-run directory under the
workspace's `.agentls/`, which goes on `PYTHONPATH`, and `PYTEST_PLUGINS`
names it. So any command that ends up running pytest (`pytest`,
`uv run pytest`, `tox -e py`, `make test`, `timeout 60 python -m pytest`,
`env X=1 pytest`) writes per-test results as JSON lines, which `results.py`
turns into counts and located failures; the plugin also applies the node-id
selection (`select`) and the per-test time bound (`test_timeout_s`). For tox,
which passes only a few variables to its environments, `TOX_OVERRIDE` adds
ours to `pass_env`.

A plain pytest command (`pytest ...`, `python -m pytest ...`) also runs with
the sandbox's interpreter and writes JUnit XML, read (by `junit.py`) only
when the plugin did not load. Any other command, or a run that ends without
either (a crash before pytest starts, a limit), is reported from its exit
code and the tail of its output, with `timed_out` and `limit_hit` set.
Failing tests are data: nothing here raises for them.
"""

from __future__ import annotations

import itertools
import os
import re
import shlex
import shutil
import xml.etree.ElementTree as ET
from collections.abc import Sequence
from pathlib import Path

from agent_core.models import TestReport
from agent_core.sandbox.base import CommandResult, Sandbox
from agent_core.testing.junit import parse_junit
from agent_core.testing.results import parse_results

OUTPUT_TAIL = 4000
PLUGIN_MODULE = "agentls_report_plugin"
PLUGIN_SOURCE = Path(__file__).with_name("pytest_plugin.py")  # read, not imported: it imports pytest
REPORT_VAR = "PYTEST_AGENTLS_REPORT"  # the plugin's own names (pytest_plugin.py), kept in step by a test
SELECT_VAR = "PYTEST_AGENTLS_SELECT"
TIMEOUT_VAR = "PYTEST_AGENTLS_TEST_TIMEOUT"
HANG_SUFFIX = ".hang"
TOX_PASS_ENV = "testenv.pass_env+=PYTHONPATH,PYTEST_PLUGINS,PYTEST_AGENTLS_*"
MIN_TEST_BOUND_S = 2.0
TEST_BOUND_FACTOR = 10.0
FAILING_BOUND_FACTOR = 3.0  # a test that failed by itself at the baseline may take 3x (+1 s) that long once fixed
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
    extra_args: Sequence[str] = (),
    select: Sequence[str] = (),
    test_timeout_s: float | None = None,
) -> TestReport:
    """Run `test_command` in `sandbox` on `workspace` (cwd) and report what happened.

    `extra_args` are appended to the command's argv (node ids, for plain pytest commands);
    `select` (workspace-relative node ids or paths) runs only those tests, through the plugin,
    whatever wraps pytest; `test_timeout_s` bounds each test phase (see `per_test_bound`).
    """
    workspace = Path(workspace).resolve()
    is_pytest, argv = pytest_argv(test_command, getattr(sandbox, "python", "python3"))
    made_dir = not (workspace / ".agentls").exists()
    run_dir = workspace / ".agentls" / f"tests-{os.getpid()}-{next(_counter)}"
    run_dir.mkdir(parents=True)
    try:
        env = plugin_env(run_dir, workspace, select, test_timeout_s)
        if is_pytest:
            argv = [*argv, *pytest_options(str((run_dir / "junit.xml").relative_to(workspace)))]
        result = await sandbox.run([*argv, *extra_args], workspace, timeout_s=timeout_s, env=env)
        report = _read_report(run_dir, workspace) or _from_exit_code(result, is_pytest)
    finally:
        shutil.rmtree(run_dir, ignore_errors=True)
        if made_dir:
            _remove_if_empty(run_dir.parent)
    report.duration_s = result.duration_s
    report.timed_out = result.timed_out
    report.limit_hit = result.limit_hit
    report.exit_code = result.exit_code
    report.output = trim_output(result)
    report.backend = getattr(sandbox, "name", "")
    return report


def plugin_env(run_dir: Path, workspace: Path, select: Sequence[str], test_timeout_s: float | None) -> dict[str, str]:
    """Put the plugin in `run_dir` and return the variables that load it in any pytest the command starts."""
    shutil.copyfile(PLUGIN_SOURCE, run_dir / f"{PLUGIN_MODULE}.py")
    env = {
        "PYTHONPATH": str(run_dir),
        "PYTEST_PLUGINS": PLUGIN_MODULE,
        REPORT_VAR: str(run_dir / "results.jsonl"),
        "TOX_OVERRIDE": TOX_PASS_ENV,
    }
    if select:
        (run_dir / "select.txt").write_text("".join(f"{workspace / node}\n" for node in select), encoding="utf-8")
        env[SELECT_VAR] = str(run_dir / "select.txt")
    if test_timeout_s:
        env[TIMEOUT_VAR] = f"{test_timeout_s:g}"
    return env


def per_test_bound(baseline: TestReport | None, setting: float = 0.0, run_timeout_s: float = 300.0) -> float:
    """The per-test time bound: the setting when set, else 10x the baseline's slowest passing test
    (at least 2 s; or FAILING_BOUND_FACTOR x its slowest test that failed by itself, plus 1 s, when longer),
    else (no baseline, or nothing passed in it) a fifth of the run's timeout."""
    if setting > 0:
        return setting
    if baseline is not None and baseline.slowest_pass_s is not None:
        failing = FAILING_BOUND_FACTOR * baseline.slowest_fail_s + 1.0 if baseline.slowest_fail_s else 0.0
        return max(MIN_TEST_BOUND_S, TEST_BOUND_FACTOR * baseline.slowest_pass_s, failing)
    return max(MIN_TEST_BOUND_S, run_timeout_s / 5)


def _read_report(run_dir: Path, workspace: Path) -> TestReport | None:
    """The plugin's report when pytest loaded it, else the JUnit XML of a plain pytest command."""
    results = _read_text(run_dir / "results.jsonl")
    if results:
        report = parse_results(results, workspace, _read_text(run_dir / f"results.jsonl{HANG_SUFFIX}"))
        if report is not None:
            return report
    junit = _read_text(run_dir / "junit.xml")
    if junit:
        try:
            return parse_junit(junit, workspace)
        except ET.ParseError:
            return None
    return None


def _read_text(path: Path) -> str:
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return ""


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
