"""Run a workspace's tests in a sandbox and return a structured `TestReport`.

Every run loads our pytest plugin (`pytest_plugin.py`) through the
environment, from outside the workspace and under a name of its own for the
run, and hears its records on a channel the tests cannot write
(`channel.py`). So any command that ends up running pytest (`pytest`,
`uv run pytest`, `tox -e py`, `make test`, `timeout 60 python -m pytest`,
`env X=1 pytest`) reports per-test results, which `results.py` turns into
counts and located failures; the plugin also applies the node-id selection
(`select`) and the per-test time bound (`test_timeout_s`). For tox, which
passes only a few variables to its environments, `TOX_OVERRIDE` adds ours to
`pass_env`. Bytecode the workspace holds is removed before each run, none is
written (`PYTHONDONTWRITEBYTECODE`; plain pytest commands keep pytest's cache
in the run's own folder), and the plugin keeps pytest from reading its rewritten
test modules' caches: a stale or forged `.pyc` never stands in for a test.

A plain pytest command (`pytest ...`, `python -m pytest ...`) also runs with
the sandbox's interpreter and writes JUnit XML, read (by `junit.py`) when
the plugin did not load; a run that loaded it is judged by its records,
which must agree with that JUnit XML and pytest's exit status
(`crosscheck.py`). Any other command, or a run that ends without either (a crash before
pytest starts, a limit), is reported from its exit
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
from agent_core.testing.channel import (  # noqa: F401 - the plugin's names, re-exported for the runner's users
    HANG_SUFFIX,
    REPORT_VAR,
    SELECT_VAR,
    TIMEOUT_VAR,
    Channel,
    closes_descriptors,
    open_channel,
)
from agent_core.testing.crosscheck import cross_check
from agent_core.testing.junit import parse_junit
from agent_core.testing.results import parse_results
from agent_core.workspace.bytecode import remove_bytecode
from agent_core.workspace.hostread import fresh_dir

OUTPUT_TAIL = 4000
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
    """What agentls adds to every pytest run. pytest's cache goes to a folder of the run's own, thrown away with
    it, rather than `-p no:cacheprovider`: a project's addopts may name the cache's options (--lf, --ff, --nf,
    --sw), which pytest refuses as a usage error when that plugin is off. The plugin turns their selections off
    (`pytest_plugin.WHOLE_RUN`): every run is the whole suite."""
    cache_rel = str(Path(junit_rel).parent / "pytest-cache")
    return [
        f"--junitxml={junit_rel}",
        "-o", "junit_family=xunit1",
        "-o", f"cache_dir={cache_rel}",
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
    paced: bool = False,
    stop_after: int = 0,
) -> TestReport:
    """Run `test_command` in `sandbox` on `workspace` (cwd) and report what happened.

    `extra_args` are appended to the command's argv (node ids, for plain pytest commands);
    `select` (workspace-relative node ids or paths) runs only those tests, through the plugin,
    whatever wraps pytest; `test_timeout_s` bounds each test phase (see `per_test_bound`): with `paced` (a
    derived bound, not the user's setting), it is the cap under which the bound follows the run's passing tests;
    `stop_after` (> 0) ends the session after that many failed tests (a run that only decides pass or fail).
    """
    workspace = Path(workspace).resolve()
    is_pytest, argv = pytest_argv(test_command, getattr(sandbox, "python", "python3"))
    made_dir = not (workspace / ".agentls").exists()
    run_dir = _fresh_run_dir(workspace)
    fds = bool(getattr(sandbox, "passes_fds", False))
    channel = open_channel(run_dir, workspace, select, test_timeout_s, fds, paced, closes_descriptors(argv),
                           stop_after)
    try:
        remove_bytecode(workspace)
        env = {**channel.env, "PYTHONDONTWRITEBYTECODE": "1"}
        if is_pytest:
            argv = [*argv, *pytest_options(str((run_dir / "junit.xml").relative_to(workspace)))]
        extra = {"pass_fds": channel.pass_fds} if fds else {}
        result = await sandbox.run([*argv, *extra_args], workspace, timeout_s=timeout_s, env=env, **extra)
        ended = is_pytest and not result.timed_out and not result.limit_hit  # pytest's own exit status
        report = _read_report(channel, workspace, result.exit_code if ended else None) or \
            _from_exit_code(result, is_pytest)
    finally:
        channel.close()
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


def _read_report(channel: Channel, workspace: Path, pytest_exit: int | None) -> TestReport | None:
    """The plugin's report when pytest loaded it (for a plain pytest command, `pytest_exit` given, checked against
    pytest's JUnit XML and exit status: crosscheck.py), else the JUnit XML of a plain pytest command."""
    results, hang = channel.records()
    junit = channel.junit()
    if results:
        report = parse_results(results, workspace, hang, token=channel.token)
        if report is not None:
            return cross_check(report, junit, pytest_exit, workspace) if pytest_exit is not None else report
    if junit:
        try:
            return parse_junit(junit, workspace)
        except ET.ParseError:
            return None
    return None


def _from_exit_code(result: CommandResult, is_pytest: bool) -> TestReport:
    """A report without per-test data: the run crashed, timed out, or is not pytest. A pytest run that exits 0
    without a report (its plugin's records and its JUnit XML both missing or unreadable) passes nothing: the
    tests may have removed or replaced them."""
    if result.exit_code == 0 and not result.timed_out and not is_pytest:
        return TestReport(passed=1)
    if is_pytest or result.timed_out or result.exit_code is None:
        return TestReport(errors=1)
    return TestReport(failed=1)


def _fresh_run_dir(workspace: Path) -> Path:
    """A new folder for this run under the workspace's `.agentls/`; a link a run planted there is removed
    first (the host would create the folder, as root, wherever it points)."""
    run_dir = fresh_dir(workspace, ".agentls") / f"tests-{os.getpid()}-{next(_counter)}"
    run_dir.mkdir()
    return run_dir


def _remove_if_empty(directory: Path) -> None:
    """Leave the workspace as it was: drop the `.agentls/` dir this run created, when nothing else is in it."""
    try:
        directory.rmdir()
    except OSError:
        pass
