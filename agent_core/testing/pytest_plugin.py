"""agentls's pytest plugin: per-test results as JSON lines, selection, and a per-test time bound.

This module runs *inside the sandbox*, in whatever Python ends up running
pytest (the sandbox's interpreter, a uv/tox/hatch environment, ...), so it
imports nothing but the standard library and pytest. The runner copies it into
the workspace's `.agentls/` as `agentls_report_plugin.py`, puts that directory
on `PYTHONPATH` and names it in `PYTEST_PLUGINS`; any command that ends up
running pytest (`uv run pytest`, `make test`, `timeout 60 python -m pytest`)
loads it. Without `PYTEST_AGENTLS_REPORT` in the environment it does nothing.

Environment:

- `PYTEST_AGENTLS_REPORT`: the JSON-lines file to append records to. Read
  once and removed, so that nested pytest runs (a project's own pytester
  tests) do nothing; pytest-xdist workers, which collect and run the tests,
  apply the two settings below and the controller writes the records;
- `PYTEST_AGENTLS_SELECT`: a file of absolute node ids (`/abs/file.py::name`),
  one per line; every other test is deselected;
- `PYTEST_AGENTLS_TEST_TIMEOUT`: seconds one test phase (setup, call,
  teardown) may take. A SIGALRM handler fails the test where it is stuck; a
  faulthandler dump (`<report>.hang`) followed by an exit backs it up for
  code that swallows the failure or blocks in C.

Records, one JSON object per line: `start`, `collect_error`, `begin` (before
a test runs: a `begin` without a `result` is a test that killed the process),
`result` and `finish`. Paths are absolute.
"""

from __future__ import annotations

import faulthandler
import json
import os
import signal
import sys
import threading
from collections.abc import Generator
from typing import Any, TextIO

import pytest

REPORT_VAR = "PYTEST_AGENTLS_REPORT"
SELECT_VAR = "PYTEST_AGENTLS_SELECT"
TIMEOUT_VAR = "PYTEST_AGENTLS_TEST_TIMEOUT"
HANG_SUFFIX = ".hang"
_LONGREPR_CAP = 6000


def _crash(longrepr: Any) -> dict | None:
    crash = getattr(longrepr, "reprcrash", None)
    if crash is None:
        return None
    return {"path": str(crash.path), "line": int(crash.lineno), "message": str(crash.message)}


def _entries(longrepr: Any) -> list[list]:
    """(path, line) of every traceback entry pytest kept, outermost first, across chained exceptions."""
    chain = getattr(longrepr, "chain", None)
    tracebacks = [element[0] for element in chain] if chain else [getattr(longrepr, "reprtraceback", None)]
    found = []
    for reprtraceback in tracebacks:
        for entry in getattr(reprtraceback, "reprentries", None) or []:
            loc = getattr(entry, "reprfileloc", None)
            if loc is not None:
                found.append([str(loc.path), int(loc.lineno)])
    return found


class Reporter:
    """The per-session half of the plugin, registered only when the report variable is set."""

    def __init__(self, config: pytest.Config, path: str) -> None:
        self.config = config
        self.path = path
        params = getattr(config, "invocation_params", None)  # older pytest versions lack these names
        self.base = str(params.dir) if params is not None else os.getcwd()
        self.rootdir = str(getattr(config, "rootpath", None) or config.rootdir)  # type: ignore[attr-defined]  # older pytest
        self.reports: dict[str, list] = {}

    # -- output ---------------------------------------------------------------------------------
    def write(self, **record: Any) -> None:
        """Append one record; a report that cannot be written must not break the user's test run."""
        try:
            with open(self.path, "a", encoding="utf-8") as out:
                out.write(json.dumps(record, default=str) + "\n")
        except OSError:
            pass

    def absolute(self, path: str) -> str:
        return os.path.normpath(os.path.join(self.rootdir, path))

    # -- hooks ----------------------------------------------------------------------------------
    def pytest_sessionstart(self, session: pytest.Session) -> None:
        self.write(event="start", pid=os.getpid(), rootdir=self.rootdir, invocation_dir=self.base)

    def pytest_collectreport(self, report: pytest.CollectReport) -> None:
        if report.failed:
            self.write(event="collect_error", nodeid=report.nodeid,
                       path=self.absolute(report.nodeid.split("::")[0]), crash=_crash(report.longrepr),
                       entries=_entries(report.longrepr), longrepr=report.longreprtext[-_LONGREPR_CAP:])

    def pytest_runtest_logstart(self, nodeid: str, location: tuple) -> None:
        self.reports[nodeid] = []
        self.write(event="begin", nodeid=nodeid, path=self.absolute(location[0]))

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        self.reports.setdefault(report.nodeid, []).append(report)

    def pytest_runtest_logfinish(self, nodeid: str, location: tuple) -> None:
        reports = self.reports.pop(nodeid, [])
        bad = next((r for r in reports if r.failed), None)
        shown = bad or next((r for r in reports if r.skipped), None)
        if bad is not None:
            outcome = "failed" if bad.when == "call" else "error"
        elif shown is not None:
            outcome = "skipped"
        else:
            outcome = "passed"
        record = {"event": "result", "nodeid": nodeid, "path": self.absolute(location[0]),
                  "line": (location[1] + 1) if location[1] is not None else None, "outcome": outcome,
                  "when": shown.when if shown is not None else "call",
                  "duration": round(sum(r.duration for r in reports), 6)}
        if bad is not None:
            record.update(crash=_crash(bad.longrepr), entries=_entries(bad.longrepr),
                          longrepr=bad.longreprtext[-_LONGREPR_CAP:])
        self.write(**record)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.write(event="finish", exitstatus=int(exitstatus), collected=session.testscollected)


class Controls:
    """What runs where the tests run (this process, or each pytest-xdist worker): selection and the time bound."""

    def __init__(self, bound: float, select: list[str], hang_path: str | None) -> None:
        self.bound = bound
        self.select = select
        self.hang_path = hang_path
        self.hang_file: TextIO | None = None

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        faulthandler.cancel_dump_traceback_later()
        if self.hang_file is not None:
            self.hang_file.close()

    @pytest.hookimpl(trylast=True)
    def pytest_collection_modifyitems(self, config: pytest.Config, items: list) -> None:
        if not self.select:
            return
        keep: list[pytest.Item] = []
        drop: list[pytest.Item] = []
        for item in items:
            (keep if self._selected(item) else drop).append(item)
        if drop:
            config.hook.pytest_deselected(items=drop)
            items[:] = keep

    def _selected(self, item: pytest.Item) -> bool:
        path = os.path.normpath(str(getattr(item, "path", None) or item.fspath))
        rest = item.nodeid.split("::", 1)[1] if "::" in item.nodeid else ""
        full = f"{path}::{rest}" if rest else path
        return any(full == s or full.startswith((s + "::", s + "[", s.rstrip("/") + "/")) for s in self.select)

    # -- the per-test time bound ----------------------------------------------------------------
    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_setup(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._bounded(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._bounded(item)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._bounded(item)

    def _bounded(self, item: pytest.Item) -> Generator[None, None, None]:
        if not self.bound:
            yield
            return
        self._arm_backstop()
        use_alarm = hasattr(signal, "SIGALRM") and threading.current_thread() is threading.main_thread()
        previous = signal.signal(signal.SIGALRM, self._on_alarm) if use_alarm else None
        if use_alarm:
            signal.setitimer(signal.ITIMER_REAL, self.bound)
        try:
            yield
        finally:
            if use_alarm:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)
            faulthandler.cancel_dump_traceback_later()

    def _arm_backstop(self) -> None:
        """If the test swallows the alarm's failure or blocks in C, dump every stack and end the process."""
        if self.hang_file is None and self.hang_path:
            self.hang_file = open(self.hang_path, "w", encoding="utf-8")  # noqa: SIM115 - kept open
        faulthandler.dump_traceback_later(self.bound * 2 + 5, exit=True, file=self.hang_file or sys.stderr)

    def _on_alarm(self, signum: int, frame: Any) -> None:
        __tracebackhide__ = True
        raise Hung(f"Timeout: the test ran longer than the {self.bound:g} s per-test bound and was stopped here")


class Hung(pytest.fail.Exception):  # type: ignore[name-defined]  # a BaseException: an `except Exception` in the code under test does not eat it
    """A test phase outlived the per-test bound."""


def _float(text: str) -> float:
    try:
        return max(float(text), 0.0)
    except ValueError:
        return 0.0


def _read_lines(path: str) -> list[str]:
    if not path:
        return []
    try:
        with open(path, encoding="utf-8") as handle:
            return [os.path.normpath(line.strip()) if "::" not in line else line.strip()
                    for line in handle if line.strip()]
    except OSError:
        return []


def pytest_configure(config: pytest.Config) -> None:
    path = os.environ.pop(REPORT_VAR, "")
    worker = hasattr(config, "workerinput")  # a pytest-xdist worker of a run that has the report
    if not path and not worker:
        return
    bound = _float(os.environ.get(TIMEOUT_VAR, ""))
    select = _read_lines(os.environ.get(SELECT_VAR, ""))
    if bound or select:
        config.pluginmanager.register(Controls(bound, select, path + HANG_SUFFIX if path else None), "agentls-controls")
    if path and not worker:
        config.option.continue_on_collection_errors = True  # one broken module must not hide every result
        config.pluginmanager.register(Reporter(config, path), "agentls-reporter")
