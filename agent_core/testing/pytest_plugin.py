"""agentls's pytest plugin: per-test results as JSON lines, selection, and a per-test time bound.

This module runs *inside the sandbox*, in whatever Python ends up running
pytest (the sandbox's interpreter, a uv/tox/hatch environment, ...), so it
imports nothing but the standard library and pytest. The runner
(testing/channel.py) copies it under a name of its own for each run
(`agentls_report_<random>`) into a directory outside the workspace, puts that
directory on `PYTHONPATH` and names it in `PYTEST_PLUGINS`; any command that
ends up running pytest (`uv run pytest`, `make test`, `timeout 60 python -m
pytest`) loads it, and no file of the project can stand in for it (it cannot
know the name). Without a report target in the environment it does nothing.

Environment (each read once at configure time and removed, so that nested
pytest runs (a project's own pytester tests) do nothing and the tests cannot
read them from `os.environ`):

- `PYTEST_AGENTLS_REPORT_FD`: an inherited file descriptor (write-only, opened
  by the host before the run on a file outside the sandbox) to append records
  to; it is moved to a high, close-on-exec descriptor. Backends that cannot
  pass descriptors (Docker) give `PYTEST_AGENTLS_REPORT`, a path, instead.
  pytest-xdist workers apply the two settings below and the controller writes
  the records;
- `PYTEST_AGENTLS_NONCE_FD`: an inherited descriptor (read-only, of an
  unlinked file) holding a random token written into every record: the host
  drops records without it (lines the code under test forges). It is read and
  closed as this module is imported, before any conftest or test module.
  Where descriptors do not reach pytest (Docker, tox) the token comes as
  `PYTEST_AGENTLS_NONCE` instead;
- `PYTEST_AGENTLS_HANG_FD` (or the report path + `.hang`): where the per-test
  bound's faulthandler dump goes;
- `PYTEST_AGENTLS_SELECT`: a file of absolute node ids (`/abs/file.py::name`),
  one per line; every other test is deselected;
- `PYTEST_AGENTLS_TEST_TIMEOUT`: seconds one test phase (setup, call,
  teardown) may take; with `PYTEST_AGENTLS_PACE` set (a bound derived by
  agentls, not the user's setting) that is the cap under which a test's call
  follows the passing tests' times, and shortens once a test hung (`Pace`).
  A SIGALRM handler
  fails the test where it is stuck (its stack is the hanging line); a
  faulthandler dump followed by an exit backs it up for code that swallows
  the failure or blocks in C;
- `PYTEST_AGENTLS_STOP_AFTER`: the session stops after this many failed
  tests (pytest's own `maxfail`, set here because the command may be any
  wrapper of pytest): a run that only has to say whether every test passes.

A test whose call passed although its own assertion raised and the code under
test swallowed it fails (swallowed.py, copied beside this module and loaded by
path: `_swallowed_plugin`).

Records, one JSON object per line: `start`, `collect_error`, `begin` (before
a test runs: a `begin` without a `result` is a test that killed the process),
`result` (outcome passed, failed, error, skipped, xfailed or xpassed; a test
that called `pytest.xfail()` is skipped, only its mark's expected failure is
xfailed) and
`finish` with the session's counts: a run without its `finish` ended before
pytest did (`os._exit`, a crash) and is not a clean run. Paths are absolute.
"""

from __future__ import annotations

import faulthandler
import fcntl
import importlib.util
import json
import os
import signal
import stat
import sys
import threading
from collections.abc import Generator
from typing import Any, TextIO

import pytest

REPORT_VAR = "PYTEST_AGENTLS_REPORT"
REPORT_FD_VAR = "PYTEST_AGENTLS_REPORT_FD"
HANG_FD_VAR = "PYTEST_AGENTLS_HANG_FD"
TOKEN_VAR = "PYTEST_AGENTLS_NONCE"  # not *_TOKEN: sandbox_env drops names that look secret
TOKEN_FD_VAR = "PYTEST_AGENTLS_NONCE_FD"
SELECT_VAR = "PYTEST_AGENTLS_SELECT"
TIMEOUT_VAR = "PYTEST_AGENTLS_TEST_TIMEOUT"
PACE_VAR = "PYTEST_AGENTLS_PACE"
STOP_VAR = "PYTEST_AGENTLS_STOP_AFTER"
HANG_SUFFIX = ".hang"
XFAIL_CALLED = "agentls_xfail_called"  # XfailCalls' tags on a report
XFAIL_ASSERTED = "agentls_xfail_asserted"
SWALLOWED_SUFFIX = "_swallowed.py"  # swallowed.py, copied beside this module under its name + this suffix
PACE_FACTOR = 10.0  # Pace: a test may take this many times the slowest passing test phase so far ...
PACE_FLOOR_S = 10.0  # ... and at least this long, until a test hangs ...
HUNG_FLOOR_S = 2.0  # ... then at least this long
_LONGREPR_CAP = 6000
_HIGH_FD = 1000  # the report's descriptor is moved up here: out of the way of the fds tests open


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


class Sink:
    """Where the records go: an inherited descriptor (moved out of the way) or, without one, a path."""

    def __init__(self, fd: int | None, path: str) -> None:
        self.fd = fd
        self.path = path

    def write(self, line: str) -> None:
        """Append one line; a report that cannot be written must not break the user's test run."""
        try:
            if self.fd is not None:
                data = line.encode("utf-8")
                while data:  # O_APPEND: each write lands at the end
                    data = data[os.write(self.fd, data):]
            else:
                with open(self.path, "a", encoding="utf-8") as out:
                    out.write(line)
        except OSError:
            pass


class Reporter:
    """The per-session half of the plugin, registered only when a report target is set."""

    def __init__(self, config: pytest.Config, sink: Sink, token: str) -> None:
        self.config = config
        self.sink = sink
        self.token = token
        params = getattr(config, "invocation_params", None)  # older pytest versions lack these names
        self.base = str(params.dir) if params is not None else os.getcwd()
        self.rootdir = str(getattr(config, "rootpath", None) or config.rootdir)  # type: ignore[attr-defined]  # older pytest
        self.reports: dict[str, list] = {}
        self.counts: dict[str, int] = {}

    # -- output ---------------------------------------------------------------------------------
    def write(self, **record: Any) -> None:
        self.sink.write(json.dumps({**record, "token": self.token}, default=str) + "\n")

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
        xfail = any(hasattr(r, "wasxfail") and not getattr(r, XFAIL_CALLED, False) for r in reports)
        if bad is not None:
            outcome = "failed" if bad.when == "call" else "error"
        elif shown is not None:
            outcome = "xfailed" if xfail else "skipped"
        else:
            outcome = "xpassed" if xfail else "passed"
        self.counts[outcome] = self.counts.get(outcome, 0) + 1
        record = {"event": "result", "nodeid": nodeid, "path": self.absolute(location[0]),
                  "line": (location[1] + 1) if location[1] is not None else None, "outcome": outcome,
                  "when": shown.when if shown is not None else "call",
                  "duration": round(sum(r.duration for r in reports), 6)}
        if outcome == "xfailed":
            record["on_assertion"] = any(getattr(r, XFAIL_ASSERTED, False) for r in reports)
        if bad is not None:
            record.update(crash=_crash(bad.longrepr), entries=_entries(bad.longrepr),
                          longrepr=bad.longreprtext[-_LONGREPR_CAP:])
        self.write(**record)

    def pytest_sessionfinish(self, session: pytest.Session, exitstatus: int) -> None:
        self.write(event="finish", exitstatus=int(exitstatus), collected=session.testscollected,
                   counts=self.counts)


class Controls:
    """What runs where the tests run (this process, or each pytest-xdist worker): selection and the time bound."""

    def __init__(self, bound: float, select: list[str], hang_path: str | None, hang_fd: int | None = None,
                 paced: bool = False, root: str = "") -> None:
        self.bound = bound
        self.pace = Pace(bound, paced)
        self.root = root
        self.test_file = ""
        self.select = select
        self.hang_path = hang_path
        self.hang_file: TextIO | None = os.fdopen(hang_fd, "w", encoding="utf-8") if hang_fd is not None else None

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
        yield from self._bounded(item, "setup")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._bounded(item, "call")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_teardown(self, item: pytest.Item) -> Generator[None, None, None]:
        yield from self._bounded(item, "teardown")

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        if report.passed and report.when == "call":
            self.pace.passed(report.duration)

    def _bounded(self, item: pytest.Item, phase: str) -> Generator[None, None, None]:
        if not self.bound:
            yield
            return
        self.bound = self.pace.now(phase)
        self.test_file = os.path.normpath(str(getattr(item, "path", None) or item.fspath))
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
        if self.bound < self.pace.cap and not self.pace.hung and not self.in_project_code(frame):
            # A paced bound, no hang yet, and the test is not in the project's own code: it waits (a sleep, a
            # subprocess, I/O in the test or a library) more likely than it loops. It gets the cap.
            signal.setitimer(signal.ITIMER_REAL, self.pace.cap - self.bound)
            self.bound = self.pace.cap
            self._arm_backstop()
            return
        why = " (shortened: an earlier test hung)" if self.pace.hung and self.bound < self.pace.cap else ""
        self.pace.hung = True
        raise Hung(f"Timeout: the test ran longer than the {self.bound:g} s per-test bound{why} and was stopped here")


    def in_project_code(self, frame: Any) -> bool:
        """Whether `frame` runs the project's own code: under the rootdir, not the running test's file, another
        test module or a conftest, not an environment or hidden folder (a .venv's site-packages)."""
        name = os.path.normpath(getattr(getattr(frame, "f_code", None), "co_filename", "") or "")
        if not self.root or not name.startswith(self.root.rstrip(os.sep) + os.sep) or name == self.test_file:
            return False
        *folders, base = os.path.relpath(name, self.root).split(os.sep)
        test_like = base.startswith("test_") or base.endswith("_test.py") or base == "conftest.py"
        return not test_like and not any(f.startswith(".") or f in _NOT_PROJECT for f in folders)


_NOT_PROJECT = {"tests", "test", "testing", "venv", "env", "site-packages", "dist-packages", "node_modules"}


class Pace:
    """The per-test bound as the run goes, capped by the configured one (`cap`). When `paced`, a test's call,
    once a test has passed, may take PACE_FACTOR times the slowest passing call so far (at least PACE_FLOOR_S),
    and once a test hung, at least only HUNG_FLOOR_S: the first hang already showed where the code loops (its
    stack at the bound), the others need not each cost the whole bound (four hanging tests made a baseline
    240 s). Setup and teardown (a slow session fixture) keep the cap, and so does a test that the paced bound
    finds outside the project's own code (waiting on a sleep, a subprocess, I/O: Controls.in_project_code)."""

    def __init__(self, cap: float, paced: bool = True) -> None:
        self.cap = cap
        self.paced = paced
        self.slowest: float | None = None
        self.hung = False

    def passed(self, seconds: float) -> None:
        self.slowest = max(self.slowest or 0.0, seconds)

    def now(self, phase: str = "call") -> float:
        if not self.paced or phase != "call" or (self.slowest is None and not self.hung):
            return self.cap
        floor = HUNG_FLOOR_S if self.hung else PACE_FLOOR_S
        return min(self.cap, max(floor, PACE_FACTOR * (self.slowest or 0.0)))


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


def _own_fd(name: str) -> int | None:
    """The inherited descriptor `name` gives, moved to a high close-on-exec one (the original closed); None when
    it is not the host's (a wrapper such as tox closed it, and the number is now some other file's): the host's
    is an unlinked regular file opened write-only and append-only."""
    text = os.environ.pop(name, "")
    if not text.isdigit():
        return None
    fd = int(text)
    try:
        info = os.fstat(fd)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
    except OSError:
        return None
    ours = stat.S_ISREG(info.st_mode) and info.st_nlink == 0 and flags & os.O_APPEND
    if not ours or flags & os.O_ACCMODE != os.O_WRONLY:
        return None
    for low in (_HIGH_FD, 3):  # a low RLIMIT_NOFILE refuses the high range
        try:
            moved = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, low)
        except OSError:
            continue
        os.close(fd)
        return moved
    return None


def _take_token() -> str:
    """The run's token, read from its inherited descriptor (an unlinked regular file opened read-only), which is
    then closed; else (Docker, tox) from the environment."""
    token = os.environ.pop(TOKEN_VAR, "")
    text = os.environ.pop(TOKEN_FD_VAR, "")
    if not text.isdigit():
        return token
    fd = int(text)
    try:
        info = os.fstat(fd)
        flags = fcntl.fcntl(fd, fcntl.F_GETFL)
        if stat.S_ISREG(info.st_mode) and info.st_nlink == 0 and flags & os.O_ACCMODE == os.O_RDONLY:
            token = os.pread(fd, 256, 0).decode("ascii", "replace").strip() or token
            os.close(fd)
    except OSError:
        pass
    return token


def _take_channel() -> list[tuple[str, int | None, int | None, str]]:
    """(report path, report fd, hang fd, token), taken from the environment when pytest imports this module
    (`PYTEST_PLUGINS` is read before any conftest file imports the code under test), and removed from it."""
    path = os.environ.pop(REPORT_VAR, "")
    fd, hang_fd = _own_fd(REPORT_FD_VAR), _own_fd(HANG_FD_VAR)
    return [(path, fd, hang_fd, _take_token())]


_CHANNEL = _take_channel()  # handed to the first session only: a nested in-process pytest (pytester) gets nothing


def _no_rewrite_cache() -> None:
    """pytest reads a rewritten test module from `__pycache__/*-pytest-*.pyc` when the header matches the
    source: a file the code under test can write while the run collects. Compile test modules afresh."""
    try:
        from _pytest.assertion import rewrite
    except ImportError:
        return
    if hasattr(rewrite, "_read_pyc"):
        rewrite._read_pyc = lambda *args, **kwargs: None


def _swallowed_plugin() -> Any:
    """swallowed.py's plugin (a test that passes although its own assertion raised fails), loaded by path from
    beside this module: the copy the runner wrote (this module's name + SWALLOWED_SUFFIX) or, imported from
    agent_core, the package's own; None when neither is there."""
    here = os.path.dirname(os.path.abspath(__file__))
    for name in (__name__.rsplit(".", 1)[-1] + SWALLOWED_SUFFIX, "swallowed.py"):
        path = os.path.join(here, name)
        spec = importlib.util.spec_from_file_location(name[:-3], path) if os.path.isfile(path) else None
        if spec is not None and spec.loader is not None:
            module = importlib.util.module_from_spec(spec)
            try:
                spec.loader.exec_module(module)
            except SyntaxError:  # Python 3.6: swallowed.py is 3.7 syntax, the run goes on without the watch
                return None
            return module.plugin(pytest)
    return None


class XfailCalls:
    """Tags how a test phase that pytest calls an expected failure (`wasxfail`) ended.

    A `pytest.xfail()` call (the test's own or the code under test's) gets `wasxfail` as a test failing as
    its xfail mark expects does (pytest 9 no longer prefixes the called one's reason), but a call is a skip
    the code chose, not the failure the test's authors declared: the result says `skipped`. A test that failed
    on its own assertion (an `AssertionError`, `pytest.fail`, a `pytest.raises` that saw nothing raised) is
    told from one the code under test crashed (the verdict takes only the first as a strict xpass fixed).
    The tags are attributes of the report, which pytest-xdist carries from a worker to the controller."""

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item: pytest.Item, call: Any) -> Generator[None, Any, None]:
        outcome = yield
        excinfo = call.excinfo
        if excinfo is None:
            return
        if isinstance(excinfo.value, pytest.xfail.Exception):
            setattr(outcome.get_result(), XFAIL_CALLED, True)
        elif isinstance(excinfo.value, (AssertionError, pytest.fail.Exception)):
            setattr(outcome.get_result(), XFAIL_ASSERTED, True)


# Options a project's addopts may carry that would run part of the suite: the cache's selections (last failed
# first or only, new first) and stepwise's stop at the first failure. A run agentls judges is the whole suite.
WHOLE_RUN = (("lf", False), ("failedfirst", False), ("newfirst", False), ("stepwise", False),
             ("stepwise_skip", False))


@pytest.hookimpl(tryfirst=True)  # before the stepwise and cache plugins read their options in their own configure
def pytest_configure(config: pytest.Config) -> None:
    path, fd, hang_fd, token = _CHANNEL.pop() if _CHANNEL else ("", None, None, "")
    worker = hasattr(config, "workerinput")  # a pytest-xdist worker of a run that has the report
    if not path and fd is None and not worker:
        return
    for name, off in WHOLE_RUN:
        if hasattr(config.option, name):
            setattr(config.option, name, off)
    stop_after = _float(os.environ.get(STOP_VAR, ""))
    if stop_after >= 1 and hasattr(config.option, "maxfail"):
        config.option.maxfail = int(stop_after)
    _no_rewrite_cache()
    bound = _float(os.environ.get(TIMEOUT_VAR, ""))
    select = _read_lines(os.environ.get(SELECT_VAR, ""))
    if bound or select:
        hang_path = path + HANG_SUFFIX if path and hang_fd is None else None
        paced = os.environ.get(PACE_VAR) == "1"
        root = str(getattr(config, "rootpath", None) or config.rootdir)  # type: ignore[attr-defined]  # older pytest
        config.pluginmanager.register(Controls(bound, select, hang_path, hang_fd, paced, root), "agentls-controls")
    config.pluginmanager.register(XfailCalls(), "agentls-xfail-calls")
    swallowed = _swallowed_plugin()
    if swallowed is not None:
        config.pluginmanager.register(swallowed, "agentls-swallowed")
    if (path or fd is not None) and not worker:
        config.option.continue_on_collection_errors = True  # one broken module must not hide every result
        config.pluginmanager.register(Reporter(config, Sink(fd, path), token), "agentls-reporter")
