"""The plugin's report against what pytest itself says: its JUnit XML and its exit status.

The plugin's records are the detailed report, but they come from inside the
tested process. A plain pytest run also leaves two witnesses the plugin does
not write: the JUnit XML pytest's own junitxml plugin writes as the session
ends, and the process's exit status. A clean plugin report must agree with
both: the JUnit XML exists and passes at least the tests the plugin passed,
and holds no failure when the plugin saw none; pytest exited 0 (or 5, no
tests) exactly when the plugin saw no failure. A run that ended before pytest
wrote its JUnit XML (`os._exit(0)` after forged records) or a report that
disagrees is not a clean run: one session error says why.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from pathlib import Path

from agent_core.models import TestFailure, TestReport
from agent_core.testing.junit import parse_junit
from agent_core.testing.results import ENDED, SESSION_NODEID

CLEAN_EXITS = (0, 5)  # pytest: all passed; no tests collected


def disagreement(report: TestReport, junit_xml: str, exit_code: int | None, workspace: Path) -> str | None:
    """Why the plugin's `report` of a plain pytest run disagrees with pytest's JUnit XML or exit status."""
    if any(f.nodeid == SESSION_NODEID or f.message in ENDED for f in report.failures) or exit_code is None:
        return None  # already not a clean run (ended early, killed, a test's process ended, timed out): said so
    bad = report.failed + report.errors
    if bad == 0 and exit_code not in CLEAN_EXITS:
        return f"pytest exited with {exit_code} although its report has no failure: not a clean run"
    if bad > 0 and exit_code == 0:
        return "pytest exited 0 although its report has failures: not a clean run"
    if not junit_xml.strip():
        return "pytest wrote no JUnit XML although its report finished: not a clean run"
    try:
        junit = parse_junit(junit_xml, workspace)
    except ET.ParseError:
        return "pytest's JUnit XML cannot be read: not a clean run"
    if report.passed > junit.passed or (bad == 0 and junit.failed + junit.errors > 0):
        return (f"the report's {report.passed} passed and {bad} failed disagree with pytest's JUnit XML "
                f"({junit.passed} passed, {junit.failed + junit.errors} failed): not a clean run")
    return None


def cross_check(report: TestReport, junit_xml: str, exit_code: int | None, workspace: Path) -> TestReport:
    """`report`, with one session error when it disagrees with pytest's own witnesses (see the docstring)."""
    why = disagreement(report, junit_xml, exit_code, workspace)
    if why:
        report.errors += 1
        report.failures.append(TestFailure(nodeid=SESSION_NODEID, file="", line=1, message=why, kind="error"))
        report.outcomes.setdefault(SESSION_NODEID, "error")
    return report
