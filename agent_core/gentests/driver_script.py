"""Runs pytest inside the sandbox for gen-tests and writes one JSON result (copied into the shadow, run there).

Stdlib + pytest + coverage only. Usage:
    python driver.py CONFIG_JSON
CONFIG: {"args": [...pytest args], "repeat": n, "coverage": bool, "target": "rel/path.py", "out": "rel.json",
         "html": "dir name beside out" (optional: coverage.py's HTML report of the measured run)}
Each repeat writes its JUnit XML into the result; the first run may be measured by coverage.py with
per-test contexts; every run records, per test, the line on which the target file last returned
(a setprofile hook, which coexists with coverage's tracer).
"""

import json
import os
import sys

import pytest


class _Recorder:
    def __init__(self, target):
        self.target = os.path.abspath(target) if target else None
        self.outcomes = {}
        self.collect_errors = {}
        self.last_lines = {}
        self._last = None

    def _profile(self, frame, event, arg):
        if event == "return" and frame.f_code.co_filename == self.target:
            self._last = frame.f_lineno

    @pytest.hookimpl(hookwrapper=True)
    def pytest_runtest_call(self, item):
        self._last = None
        sys.setprofile(self._profile if self.target else None)
        try:
            yield
        finally:
            sys.setprofile(None)
            if self._last is not None:
                self.last_lines[item.nodeid] = self._last

    def pytest_runtest_logreport(self, report):
        if report.when == "call" or report.outcome != "passed":
            previous = self.outcomes.get(report.nodeid)
            if previous in (None, "passed"):
                self.outcomes[report.nodeid] = report.outcome if report.when == "call" else "error"

    def pytest_collectreport(self, report):
        if report.failed:
            self.collect_errors[report.nodeid] = str(report.longrepr)[-3000:]


def _coverage_data(cov, target):
    data = cov.get_data()
    path = os.path.abspath(target)
    statements = sorted(cov.analysis2(path)[1]) if path in data.measured_files() else []
    contexts = {}
    for context in sorted(data.measured_contexts()):
        data.set_query_context(context)
        contexts[context] = {"lines": sorted(data.lines(path) or []),
                             "arcs": sorted(list(a) for a in (data.arcs(path) or []))}
    data.set_query_context(None)
    return {"statements": statements, "contexts": contexts}


def main():
    sys.path.insert(0, os.getcwd())  # like `python -m pytest`: the workspace root is importable
    with open(sys.argv[1]) as handle:
        config = json.load(handle)
    out_dir = os.path.dirname(config["out"]) or "."
    result = {"runs": []}
    for index in range(config.get("repeat", 1)):
        junit = os.path.join(out_dir, f"junit-{index}.xml")
        recorder = _Recorder(config.get("target"))
        cov = None
        if index == 0 and config.get("coverage"):
            import coverage

            cov = coverage.Coverage(data_file=os.path.join(out_dir, "coverage.data"), branch=True,
                                    include=[os.path.abspath(config["target"])], config_file=False)
            cov.set_option("run:dynamic_context", "test_function")
            cov.start()
        code = pytest.main(list(config["args"]) + ["-p", "no:cacheprovider", "--junitxml=" + junit, "-q",
                                                    "--continue-on-collection-errors"],
                           plugins=[recorder])
        run = {"exit_code": int(code), "outcomes": recorder.outcomes, "collect_errors": recorder.collect_errors,
               "last_lines": recorder.last_lines, "junit": ""}
        if cov is not None:
            cov.stop()
            cov.save()
            run["coverage"] = _coverage_data(cov, config["target"])
            if config.get("html"):
                cov.html_report(directory=os.path.join(out_dir, config["html"]), show_contexts=True,
                                title="coverage of " + config["target"])
        if os.path.exists(junit):
            with open(junit) as handle:
                run["junit"] = handle.read()
        result["runs"].append(run)
    with open(config["out"], "w") as handle:
        json.dump(result, handle)


if __name__ == "__main__":
    main()
