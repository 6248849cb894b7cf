"""Runs inside the sandbox beside driver_script.py: the localizing run, one coverage context per test.

Stdlib + pytest (+ coverage) only, and Python 3.7 syntax: the project's own interpreter runs it. The suite
runs once under coverage.py (or, where coverage.py does not run, the line tracer of driver_trace.py), each
test's call bounded by a SIGALRM, and `localize` returns the per-test lines, outcomes and durations.

Lines run only to describe a failure are not evidence of it, and are not recorded: pytest's explanation of a
failed `assert` (the `repr` of each value in it), unittest's message of a failed `assertEqual` or `assertIn`,
and the report pytest writes of a failed test (`str` of the exception) run the workspace's `__repr__` and
`__str__` in the failing tests alone, so they ranked first (the `__repr__` of a parser's tokens were the top
three suspects of two real sqlparse bugs). Those calls run with no context (`QUIET`), like the code between
tests.
"""

import os
import signal
import sys

import pytest

try:  # copied beside driver_script.py in the sandbox (search/driver/sandboxed.py)
    import driver_options
    import driver_trace
except ImportError:  # imported as part of agent_core (the import-rule tests import every module)
    from . import driver_options, driver_trace


# The functions that describe a failure, by module: what they run is not recorded. Those a version lacks are
# skipped (pytest 3.10 to 8, Python 3.6 on).
QUIET = (
    ("_pytest.assertion.rewrite", ("_saferepr", "_format_assertmsg", "_call_reprcompare")),
    ("unittest.case", ("safe_repr", "_common_shorten_repr")),
)


class TestTimeout(Exception):
    """Raised inside a test that ran longer than the per-test bound."""


def alarm(signum, frame):
    raise TestTimeout("stopped by agentls' per-test bound while localizing")


class _Contexts:
    """A pytest plugin that names coverage's dynamic context after the running test's node id.

    Each test's call is bounded (SIGALRM raises in it): a test that loops forever fails after the bound
    with the loop's lines covered, which is where the fault is.
    """

    def __init__(self, cov, test_timeout_s, select=()):
        self.cov = cov
        self.context = ""
        self.test_timeout_s = test_timeout_s
        self.select = tuple(select)
        self.outcomes = {}
        self.durations = {}  # seconds per test: setup, call and teardown (under coverage)

    def pytest_collection_modifyitems(self, session, config, items):
        if not self.select:
            return
        def chosen(nodeid):
            return any(nodeid == s or nodeid.startswith(s + "::") or nodeid.startswith(s + "[") for s in self.select)
        kept = [item for item in items if chosen(item.nodeid)]
        if kept:  # a selection that matches nothing (another rootdir) keeps the whole suite
            config.hook.pytest_deselected(items=[item for item in items if not chosen(item.nodeid)])
            items[:] = kept

    def switch(self, context):
        self.context = context
        if self.cov is not None:
            self.cov.switch_context(context)

    def quietly(self, function):
        """`function` run with no context (see the module's docstring), the context before it restored."""
        def quiet(*args, **kwargs):
            context = self.context
            self.switch("")
            try:
                return function(*args, **kwargs)
            finally:
                self.switch(context)
        quiet.__wrapped__ = function
        return quiet

    def quiet_reports(self):
        """Wrap the QUIET functions; returns what to call to unwrap them."""
        undo = []
        for module_name, names in QUIET:
            module = sys.modules.get(module_name)
            if module is None:
                try:
                    module = __import__(module_name, fromlist=["_"])
                except Exception:  # noqa: BLE001 - a pytest or Python without it: nothing to wrap
                    continue
            for name in names:
                function = getattr(module, name, None)
                if callable(function):
                    setattr(module, name, self.quietly(function))
                    undo.append((module, name, function))
        def restore():
            for module, name, function in undo:
                setattr(module, name, function)
        return restore

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_protocol(self, item, nextitem):
        self.switch(item.nodeid)
        yield
        self.switch("")

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_makereport(self, item, call):
        context = self.context
        self.switch("")
        try:
            yield
        finally:
            self.switch(context)

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        previous = signal.signal(signal.SIGALRM, alarm) if self.test_timeout_s else None
        if self.test_timeout_s:
            signal.setitimer(signal.ITIMER_REAL, self.test_timeout_s)
        try:
            yield
        finally:
            if self.test_timeout_s:
                signal.setitimer(signal.ITIMER_REAL, 0)
                signal.signal(signal.SIGALRM, previous)

    def pytest_runtest_logreport(self, report):
        self.durations[report.nodeid] = round(self.durations.get(report.nodeid, 0.0) + report.duration, 4)
        first = self.outcomes.get(report.nodeid) in (None, "passed")
        if first and (report.when == "call" or report.outcome != "passed"):
            self.outcomes[report.nodeid] = report.outcome if report.when == "call" else "error"


def _measured(cov, root):
    data = cov.get_data()
    files = {}
    for path in sorted(data.measured_files()):
        rel = os.path.relpath(path, root)
        if rel.startswith(("..", ".agentls")):
            continue
        per_test = {}
        for context in sorted(data.measured_contexts()):
            if not context:
                continue
            data.set_query_context(context)
            lines = data.lines(path)
            if lines:
                per_test[context] = sorted(lines)
        data.set_query_context(None)
        if per_test:
            files[rel] = per_test
    return files


def line_recorder(root):
    """(recorder, what it is) started: coverage.py when it runs on this interpreter (with contexts, 5.0 and later),
    else the line tracer shipped beside this script (driver_trace.py), else (None, why not)."""
    why = ""
    try:
        import coverage

        cov = coverage.Coverage(data_file=None, source=[root], config_file=False)
        if not hasattr(cov, "switch_context"):
            raise RuntimeError(f"coverage.py {coverage.__version__} has no per-test contexts")
        cov.start()
        return cov, f"coverage.py {coverage.__version__}"
    except Exception as exc:  # noqa: BLE001 - any coverage.py that cannot run here: our tracer instead
        version = "{}.{}".format(*sys.version_info[:2])
        why = f"coverage.py does not run on Python {version} here ({type(exc).__name__}: {str(exc)[:200]})"
    try:
        tracer = driver_trace.LineTracer(root)
        tracer.start()
        return tracer, "agentls' line tracer; " + why
    except Exception as exc:  # noqa: BLE001 - no line data at all: outcomes and tracebacks only
        return None, f"none; {why}; the line tracer failed ({type(exc).__name__}: {exc})"


def localize(config):
    root = os.getcwd()
    cov, recorder = line_recorder(root)
    plugin = _Contexts(cov, config.get("test_timeout_s"), config.get("select") or ())
    restore = plugin.quiet_reports()
    try:
        args = [*config["args"], *driver_options.neutral_args(), "-q", "--continue-on-collection-errors"]
        code = pytest.main(args, plugins=[plugin, driver_options.OneProcess(False)])
    finally:
        restore()
        if cov is not None:
            cov.stop()
    if cov is None:
        files = {}
    else:
        files = cov.measured(root) if hasattr(cov, "measured") else _measured(cov, root)
    result = {"coverage": cov is not None, "recorder": recorder, "outcomes": plugin.outcomes, "files": files,
              "durations": plugin.durations, "exit": int(code)}
    if not plugin.outcomes and int(code) not in (0, 1, 5):
        result["error"] = f"pytest exited with status {int(code)} before running any test"
    return result
