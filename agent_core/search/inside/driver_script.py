"""Runs inside the sandbox for localization and mutant search; writes one JSON result (copied into the shadow).

Stdlib + pytest (+ coverage for localization) only, and Python 3.7 syntax: the project's own interpreter
runs it. Its siblings driver_localize.py, driver_swap.py, driver_trace.py and driver_options.py are copied
beside it. Usage:
    python driver.py CONFIG_JSON
CONFIG "recorder": {"mode": "recorder", "out": "rel.json"} writes {"recorder": what would record per-test lines}.
CONFIG "localize": {"mode": "localize", "args": [...pytest args], "test_timeout_s": s, "select": [...],
    "out": "rel.json"}
    runs the suite once under coverage.py (only the tests whose node ids equal or lie under one of
    `select`, when given), one coverage context per test node id, each test's call bounded by
    `test_timeout_s`, and writes
    {"coverage": bool, "recorder": what recorded the lines, "outcomes": {nodeid: outcome},
     "files": {rel_path: {nodeid: [lines]}}, "durations": {nodeid: seconds}, "exit": pytest's status}
    (and "error" when pytest ended before any test ran). Where coverage.py does not run (a project
    interpreter older than the coverage.py it can import, or none), driver_trace.py records the lines.
CONFIG "mutants": {"mode": "mutants", "nodeids": [...], "mutants": [{"id", "path", "line", "text", "end"?}],
    "timeout_s": s, "budget_s": s, "max_passing": n, "out": "rel.json"}
    starts pytest once on the failing tests and, at collection time, forks a child per mutant that
    serves the mutated source of `path` to the import system (the files on disk are never written),
    collects, runs the tests and exits with pytest's status; a child that outlives `timeout_s` is
    killed with its process group. Writes
    {"results": [{"id", "outcome": "passed" | "failed" | "timeout"}], "stopped": null | "budget" | "enough",
     "exit": pytest's status} (and "error" when not one mutant ran).
    A mutant with "tests": [...] runs those too, after the failing tests ("nodeids" is then what pytest
    collects, e.g. the files, and "failing" the failing tests' ids; each child keeps those and its "tests").
    With "per_test": true (mutation testing) every test runs (no -x), each test's call is bounded by
    "test_timeout_s", and each result also carries {"tests": {nodeid: outcome}}; a test that was running
    when its mutant's child was killed counts as "timeout". With "each_failing": true (hot or not) every
    failing test runs and a mutant's child stops at the first failure of another test (its "tests"), and
    each result carries {"tests": {nodeid: outcome}} of the tests that ran: which failing tests a
    candidate makes pass when it does not make them all pass (search/driver/partials.py). With "reach": true,
    a child with no mutant runs first, and each result and the result's "baseline" carry {"reach": {nodeid:
    [line, exception type]}}: for each failing test that failed in its call, the line of the test's own
    function the failure left it at and what was raised (search/driver/steps.py: a candidate after which the
    test fails further on, the same way, is a step).
"""

import importlib.machinery
import importlib.util
import inspect
import json
import os
import signal
import sys
import time

import pytest

try:  # copied beside this script in the sandbox (search/driver/sandboxed.py)
    import driver_localize
    import driver_options
    import driver_swap
except ImportError:  # imported as part of agent_core (the import-rule tests import every module)
    from . import driver_localize, driver_options, driver_swap
SWALLOWED = "driver_swallowed.py"  # agentls' testing/swallowed.py, copied beside this script (sandboxed.py)


def _judging_plugins():
    """The plugins that judge a mutant's tests as agentls' own runs do: a test that passes although its own
    assertion raised (the mutant swallowed it) fails. Loaded by path: the copy is not a module of the project."""
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), SWALLOWED)
    spec = importlib.util.spec_from_file_location(SWALLOWED[:-3], path) if os.path.isfile(path) else None
    if spec is None or spec.loader is None:
        return []
    module = importlib.util.module_from_spec(spec)
    try:
        spec.loader.exec_module(module)
    except SyntaxError:  # Python 3.6 (swallowed.py is 3.7 syntax): the mutants are judged without the watch
        return []
    return [module.plugin(pytest)]


def _serve_mutant(path, source):
    """Make the import system compile `source` for the module file at `path` (no .pyc, no disk write)."""
    original = importlib.machinery.SourceFileLoader.get_code

    def get_code(self, fullname):
        if _same_file(self.get_filename(fullname), path):
            return compile(source, self.get_filename(fullname), "exec", dont_inherit=True)
        return original(self, fullname)

    importlib.machinery.SourceFileLoader.get_code = get_code
    # Imported early (a conftest that imports the package): imported again, mutated. Not the module alone: its
    # package's __init__ re-exports its names (`from pkg.schema import Schema`) and the project's other
    # modules hold them (a test helper module a conftest imported), so every module of the project's own code
    # goes, and the tests' imports in this child load them afresh, the mutant among them.
    # (its own package by name too: an editable install may import it through a path outside the copy)
    mutated = [name for name, module in list(sys.modules.items())
               if _same_file(getattr(module, "__file__", None) or "", path)]
    packages = {name.split(".", 1)[0] for name in mutated}
    if mutated:
        for name in [name for name, module in list(sys.modules.items())
                     if name.split(".", 1)[0] in packages or _project_module(module)]:
            del sys.modules[name]


def _project_module(module):
    """Whether `module` is the project's own code: a file under the working directory (the project's copy), not
    an installed package (a `.venv` inside the project), the driver's folder or a conftest (pytest's plugin)."""
    file = getattr(module, "__file__", None)
    if not file:
        return False
    here = os.path.realpath(os.getcwd())
    real = os.path.realpath(file)
    if not real.startswith(here + os.sep):
        return False
    parts = os.path.relpath(real, here).split(os.sep)
    return not (parts[0].startswith(".") or "site-packages" in parts or "dist-packages" in parts
                or parts[-1] == "conftest.py")


def _same_file(a, b):
    """The same file under any name: a project's editable install may import it through the path of the
    checkout that the sandbox binds the shadow copy over (a src/ layout), not through the working directory."""
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _wait(pid, timeout_s, unswappable=False, statuses=None):
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else -1
            if statuses is not None:
                statuses.append(code)
            if unswappable and code == UNSWAPPABLE:
                return "unswappable"
            return "passed" if code == 0 else "failed"
        time.sleep(0.005)
    for kill in (lambda: os.killpg(pid, signal.SIGKILL), lambda: os.kill(pid, signal.SIGKILL)):
        try:
            kill()
        except OSError:
            pass
    os.waitpid(pid, 0)
    return "timeout"


class _MutantChildren:
    """What both mutant plugins share: the config, the result, the file cache, the loop that forks a child per
    mutant and records its outcome (until the budget or enough passing ones), and the child's exit."""

    hot = False  # a hot child exits with UNSWAPPABLE when its mutant cannot be swapped in

    def __init__(self, config):
        self.config = config
        self.per_test = bool(config.get("per_test"))
        self.each_failing = bool(config.get("each_failing"))
        self.failing = set(config.get("failing") or ())
        self.reach = bool(config.get("reach"))
        self.logged = self.per_test or self.each_failing or self.reach
        self.log = None  # the child's per-test outcome log (per_test, each_failing and reach modes)
        self.session = None
        self.failing_items = None  # a hot child's failing tests collected (each_failing)
        self.failing_done = 0  # ... of them, ended
        self.failing_passed = False  # ... one of them passed
        self.sources = {}
        self.result = {"results": [], "stopped": None}
        self.statuses = []  # each child's exit status: all of them a usage or internal error is the driver's failure
        self.in_child = False
        self.judges = _judging_plugins()  # registered with pytest beside this plugin (`mutants`)

    def _source(self, path):
        if path not in self.sources:
            with open(path, encoding="utf-8") as handle:
                self.sources[path] = handle.read()
        return self.sources[path]

    def _outcome_extra(self, mutant):
        if not self.logged:
            return {}
        tests, reach = _read_log(_log_path(self.config, mutant["id"]))
        extra = {"tests": tests} if self.per_test or self.each_failing else {}
        if self.reach:
            extra["reach"] = reach
        return extra

    def _open_log(self, mutant):
        """In a child: its per-test outcome log, when the mode keeps one."""
        if self.logged:
            self.log = open(_log_path(self.config, mutant["id"]), "w", encoding="utf-8")  # noqa: SIM115 - open for the child's whole life

    def pytest_sessionstart(self, session):
        self.session = session

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        """A test's start in the child's log (a test begun and never ended was cut); with per_test, its call
        bounded by test_timeout_s."""
        bound = self.config.get("test_timeout_s") if self.per_test else None
        if self.log is not None:
            self.log.write(json.dumps(["start", item.nodeid]) + "\n")
            self.log.flush()
        if bound:
            previous = signal.signal(signal.SIGALRM, driver_localize.alarm)
            signal.setitimer(signal.ITIMER_REAL, bound)
        try:
            yield
        finally:
            if bound:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)

    def pytest_runtest_makereport(self, item, call):
        """reach: where a failing test's own function was when its call raised (`_reach`), in the child's log."""
        if self.reach and self.log is not None and call.when == "call" and call.excinfo is not None \
                and item.nodeid in self.failing:
            line = _reach(item, call.excinfo.tb)
            if line is not None:
                self.log.write(json.dumps(["reach", item.nodeid, [line, call.excinfo.typename]]) + "\n")
                self.log.flush()

    def pytest_runtest_logreport(self, report):
        if self.log is not None and (report.when == "call" or report.outcome != "passed"):
            self.log.write(json.dumps(["end", report.nodeid, report.outcome]) + "\n")
            self.log.flush()
        if self.each_failing and self.in_child and self.session is not None:
            self._stop_early(report)

    def _stop_early(self, report):
        """each_failing's -x: the failing tests all run (they come first); the child stops at the first failure
        of another test, and once the failing tests are done (or another test began) and none of them passed
        (the candidate is no partial fix: its covering tests need not run)."""
        if report.nodeid in self.failing:
            if report.when == "call" or report.outcome != "passed":
                self.failing_done += 1
                self.failing_passed = self.failing_passed or report.when == "call" and report.passed
            over = self.failing_items is not None and self.failing_done >= self.failing_items
            if over and not self.failing_passed:
                self.session.shouldfail = "no failing test passed"
        elif report.failed or not self.failing_passed:
            self.session.shouldfail = "a test other than the failing ones failed" if report.failed else \
                "no failing test passed"

    def _each_mutant(self, fork, items=()):
        """Fork each mutant's child with `fork(mutant)` (0 in the child), wait and record; True in a child.
        `items`: the collected tests (the hot driver's), whose files the judges read once here, not per child."""
        names = {n.split("::", 1)[0] for n in self.config.get("failing") or ()}
        names.update(n.split("::", 1)[0] for m in self.config["mutants"] for n in m.get("tests") or ())
        for judge in self.judges:
            if hasattr(judge, "warm"):
                judge.warm(items, sorted(os.path.abspath(name) for name in names))
        started = time.monotonic()
        passing = 0
        if self.reach:  # the failing tests' reach without a mutant, in this run's state: what a step goes beyond
            baseline = {"id": "baseline"}
            pid = self._start(fork, baseline)
            if pid == 0:
                return True
            outcome = _wait(pid, self.config["timeout_s"])
            self.result["baseline"] = {"outcome": outcome, "reach": self._outcome_extra(baseline).get("reach", {})}
        for mutant in self.config["mutants"]:
            if time.monotonic() - started > self.config["budget_s"]:
                self.result["stopped"] = "budget"
                break
            pid = self._start(fork, mutant)
            if pid == 0:
                return True
            began = time.monotonic()
            outcome = _wait(pid, self.config["timeout_s"], unswappable=self.hot, statuses=self.statuses)
            entry = {"id": mutant["id"], "outcome": outcome, "duration_s": round(time.monotonic() - began, 3)}
            entry.update(self._outcome_extra(mutant))
            self.result["results"].append(entry)
            _note_progress(self.config, len(self.result["results"]))
            passing += outcome == "passed"
            if passing >= self.config["max_passing"]:
                self.result["stopped"] = "enough"
                break
        return False

    def _start(self, fork, mutant):
        """`fork(mutant)` with this process's output flushed first (a child must not write it again): the pid, 0
        in the child (quietened)."""
        sys.stdout.flush()
        sys.stderr.flush()
        pid = fork(mutant)
        if pid == 0:
            self._quiet()
        return pid

    def pytest_configure(self, config):
        self.pytest_config = config

    def _quiet(self):
        """In a child: its failures' tracebacks as Python prints them (`--tb=native`). Only the exit status is
        read; pytest's own style parses each traceback entry's whole file to show its statement (more-itertools'
        test module and its 5,600-line module, for every failing test of every candidate)."""
        config = getattr(self, "pytest_config", None)
        if config is not None and hasattr(config.option, "tbstyle"):
            config.option.tbstyle = "native"

    @pytest.hookimpl(trylast=True)
    def pytest_sessionfinish(self, session, exitstatus):
        if self.in_child:
            os._exit(int(exitstatus))


def _note_progress(config, tried):
    """How many mutants are done, in a file the host polls while the driver runs (a front end's live count)."""
    try:
        with open(os.path.join(os.path.dirname(config["out"]) or ".", "progress"), "w") as handle:
            handle.write(str(tried))
    except OSError:  # a progress count is an aid: never a reason to stop
        pass


class _Forker(_MutantChildren):
    """A pytest plugin: once pytest is configured, fork one child per mutant at collection time.

    The parent never collects (no project module is imported in it); each child installs its
    mutant, collects and runs the failing tests of the session and exits with pytest's status.
    Config parsing and plugin start-up are paid once, not once per mutant.
    """

    def __init__(self, config):
        super().__init__(config)
        self.keep = None  # the child's tests, failing ones first, when its mutant names extra tests

    def _fork(self, mutant):
        lines = None
        if mutant.get("path") is not None:  # not the reach's baseline
            lines = self._source(mutant["path"]).split("\n")
            lines[mutant["line"] - 1 : max(mutant["line"], mutant.get("end") or 0)] = [mutant["text"]]
        pid = os.fork()
        if pid == 0:
            self.in_child = True
            if mutant.get("tests") is not None or lines is None:  # the baseline: the failing tests alone
                self.keep = list(dict.fromkeys([*self.config["failing"], *(mutant.get("tests") or [])]))
            os.setpgid(0, 0)
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, 1)
            os.dup2(devnull, 2)
            self._open_log(mutant)
            if lines is not None:
                _serve_mutant(mutant["path"], "\n".join(lines))
        return pid

    @pytest.hookimpl(tryfirst=True)
    def pytest_collection(self, session):
        if self._each_mutant(self._fork):
            return None  # the child collects and runs the tests with its mutant
        session.items = []
        session.testscollected = 0
        return True

    def pytest_collection_modifyitems(self, session, config, items):
        if self.keep is None:
            return
        order = {nodeid: i for i, nodeid in enumerate(self.keep)}
        items[:] = sorted((item for item in items if item.nodeid in order), key=lambda item: order[item.nodeid])


def _log_path(config, mutant_id):
    return os.path.join(os.path.dirname(config["out"]) or ".", f"tests-{mutant_id}.jsonl")


def _reach(item, tb):
    """The line of `item`'s own function the traceback `tb` (from pytest's call down) passes through: its code
    object's frame (the test function, unwrapped), or else the outermost frame in the test's file; None when
    neither is in it."""
    function = getattr(item, "obj", None)
    code = getattr(inspect.unwrap(function), "__code__", None) if function is not None else None
    path = str(getattr(item, "path", None) or getattr(item, "fspath", ""))
    outer = None
    while tb is not None:
        frame_code = tb.tb_frame.f_code
        if frame_code is code:
            return tb.tb_lineno
        if outer is None and path and _same_file(frame_code.co_filename, path):
            outer = tb.tb_lineno
        tb = tb.tb_next
    return outer


def _read_log(path):
    """({nodeid: outcome}, {nodeid: [reach line, exception type]}) from a child's log: a test started and never
    ended was stopped by the bound."""
    tests, reach = {}, {}
    try:
        with open(path, encoding="utf-8") as handle:
            for line in handle:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue  # a line cut short by the kill
                if event[0] == "reach":
                    reach[event[1]] = event[2]
                elif event[0] == "start":
                    tests.setdefault(event[1], "timeout")
                elif tests.get(event[1]) in (None, "timeout", "passed"):
                    tests[event[1]] = event[2]
        os.unlink(path)
    except OSError:
        pass
    return tests, reach


UNSWAPPABLE = 97  # a hot child's exit status when its mutant cannot be put into a live function


class _HotForker(_MutantChildren):
    """A pytest plugin for "hot" mutants: the parent imports and collects once, then forks a child per mutant
    that swaps the mutated function's code into the live function (driver_swap.py) and runs its tests.

    A mutant the swap cannot express comes back as "unswappable" (the caller tries it the slow way).
    """

    hot = True

    def _child(self, session, mutant):
        self.in_child = True
        os.setpgid(0, 0)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 1)
        os.dup2(devnull, 2)
        if mutant.get("path") is not None and not driver_swap.swap(
                mutant["path"], self._source(mutant["path"]), mutant["line"], mutant["text"], mutant.get("end") or 0):
            os._exit(UNSWAPPABLE)
        self._open_log(mutant)
        keep = list(dict.fromkeys([*self.config["failing"], *(mutant.get("tests") or [])]))
        order = {nodeid: i for i, nodeid in enumerate(keep)}
        session.items = sorted((i for i in session.items if i.nodeid in order), key=lambda i: order[i.nodeid])
        session.testscollected = len(session.items)
        self.failing_items = sum(1 for item in session.items if item.nodeid in self.failing)

    def _fork(self, session, mutant):
        pid = os.fork()
        if pid == 0:
            self._child(session, mutant)
        return pid

    @pytest.hookimpl(tryfirst=True)
    def pytest_runtestloop(self, session):
        if self._each_mutant(lambda mutant: self._fork(session, mutant), session.items):
            return None  # the child runs its tests with pytest's own loop
        return True

def mutants(config):
    if config.get("hot"):
        forker = _HotForker(config)
        stop_first = [] if config.get("each_failing") else ["-x"]  # each_failing: the plugin's own stop
        args = list(config["nodeids"]) + [*driver_options.neutral_args(), *stop_first]
        code = pytest.main(args, plugins=[forker, driver_options.OneProcess(not config.get("each_failing")),
                                          *forker.judges])
        if forker.in_child:
            os._exit(int(code) or 4)
        return _with_status(forker, config, code)
    forker = _Forker(config)
    every = config.get("per_test") or config.get("each_failing")
    stop_first = [] if every else ["-x"]
    code = pytest.main(list(config["nodeids"]) + [*driver_options.neutral_args(), *stop_first],
                       plugins=[forker, driver_options.OneProcess(not every), *forker.judges])
    if forker.in_child:  # pytest ended before its session finished (a usage error)
        os._exit(int(code) or 4)
    return _with_status(forker, config, code)


_NOT_RUN = {3: "an internal error", 4: "a usage error", 5: "no test collected"}  # pytest's exit statuses


def _with_status(forker, config, code):
    """The result with pytest's exit status, and an error when not one mutant ran (a usage error, a test file that
    does not collect, a crash) or every mutant's child ended without running a test: never a result that looks
    like a search that found nothing."""
    result = forker.result
    result["exit"] = int(code)
    if config["mutants"] and not result["results"] and result["stopped"] is None:
        result["error"] = f"pytest exited with status {int(code)} before any mutant ran"
    elif forker.statuses and len(set(forker.statuses)) == 1 and forker.statuses[0] in _NOT_RUN:
        status = forker.statuses[0]
        result["error"] = f"pytest ended with status {status} ({_NOT_RUN[status]}) for every mutant: none was tried"
    return result


def main():
    sys.path.insert(0, os.getcwd())  # like `python -m pytest`: the workspace root is importable
    with open(sys.argv[1]) as handle:
        config = json.load(handle)
    try:
        if config["mode"] == "recorder":  # `agentls sandbox doctor`: what would record the per-test lines here
            recorder, result = driver_localize.line_recorder(os.getcwd())
            if recorder is not None:
                recorder.stop()
            result = {"recorder": result}
        else:
            result = driver_localize.localize(config) if config["mode"] == "localize" else mutants(config)
    finally:
        driver_options.clean_up()
    with open(config["out"], "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
