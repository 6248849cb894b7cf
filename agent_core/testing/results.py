"""Turn the JSON lines of our pytest plugin (pytest_plugin.py) into a `TestReport`.

Each failing test becomes a `TestFailure` located twice, as `junit.py` does
for JUnit XML: in the test file (the last traceback entry inside the test's
own file, else the test's `def` line) and in the code under test (the
innermost entry inside the workspace that is not a test file). The entries
come from pytest's own report objects (`reprcrash` and the traceback's
entries), not from parsing text; collection errors, whose report is text,
fall back to the text. A test that began but has no result ended the process:
it is reported as an error located from the faulthandler dump of its stack
(the per-test bound's backstop) when there is one. Frames inside `.agentls/`
(the plugin itself) are never a location.

Only records that carry the run's token count (lines the code under test
appends are dropped), and every session the plugin started must end with its
`finish` record, whose counts agree with the results: a run that ended
before pytest did (`os._exit(0)` after forging a report) is an error, never
a pass. xfailed tests count as skipped and xpassed ones as passed, each kept
under its own name in `outcomes` (testing/verdict.py asks more of a
baseline's failing tests than a count).
"""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Literal

from agent_core.models import TestFailure, TestReport
from agent_core.testing.junit import (
    Frame,
    _frame,
    _message,
    traceback_frames,
)
from agent_core.workspace.testfiles import is_protected

SESSION_NODEID = "(test session)"  # the failure of a run that did not end cleanly
_OUTCOMES = ("passed", "failed", "skipped", "xfailed", "xpassed")
ENDED_HUNG = "Timeout: the test outlived the per-test bound, ignored the stop, and its process was ended"
ENDED_CRASHED = "the test process ended during this test (a crash, a limit, or the run's time limit)"
ENDED = (ENDED_HUNG, ENDED_CRASHED)  # a test during which the process was ended: pytest wrote no JUnit XML then
HUNG_MARK = "Timeout: the test "  # the per-test bound's failure messages (pytest_plugin.Hung, an ended process)

_MAX_TRACEBACK = 6000
_DUMP_FRAME = re.compile(r'File "(?P<path>[^"]+)", line (?P<line>\d+)')


def read_records(text: str, token: str | None = None) -> list[dict]:
    """The well-formed records of a report (a line cut short by a killed process is skipped); given a
    `token`, only the records that carry it."""
    records = []
    for line in text.splitlines():
        try:
            record = json.loads(line)
        except ValueError:
            continue
        if isinstance(record, dict) and isinstance(record.get("event"), str):
            if token is None or record.get("token") == token:
                records.append(record)
    return records


def _unclean(records: list[dict]) -> str | None:
    """Why the records are not a clean run (a session without its `finish`, or counts that disagree)."""
    tally: dict[str, int] | None = None
    for record in records:
        if record["event"] == "start":
            if tally is not None:
                return "a pytest session started before the one before it finished"
            tally = {}
        elif record["event"] == "result" and tally is not None:
            outcome = str(record.get("outcome"))
            tally[outcome] = tally.get(outcome, 0) + 1
        elif record["event"] == "finish":
            if tally is None or tally != (record.get("counts") or {}):
                return "the test report's results do not add up to its session's counts: not a clean run"
            tally = None
    if tally is not None:
        return ("the test process ended before pytest finished its session (os._exit, a crash or a kill): "
                "not a clean run")
    return None


def parse_results(text: str, workspace: Path, hang_dump: str = "", token: str | None = None) -> TestReport | None:
    """A report from the plugin's records; None when pytest never started a session with the plugin."""
    records = read_records(text, token)
    if not any(r["event"] == "start" for r in records):
        return None
    report = TestReport()
    begun: dict[str, dict] = {}
    slowest: float | None = None
    slowest_fail: float | None = None
    for record in records:
        event = record["event"]
        if event == "collect_error":
            report.errors += 1
            report.failures.append(_collect_failure(record, workspace))
            report.test_files.append(_rel(record["path"], workspace))
        elif event == "begin":
            begun[record["nodeid"]] = record
        elif event == "result":
            begun.pop(record["nodeid"], None)
            outcome = record.get("outcome")
            nodeid = _nodeid(record, _rel(record["path"], workspace))
            report.test_files.append(_rel(record["path"], workspace))
            if report.outcomes.get(nodeid) in (None, "passed"):  # a teardown error after a pass counts
                report.outcomes[nodeid] = outcome if outcome in _OUTCOMES else "error"
            if outcome in ("passed", "xpassed"):
                report.passed += 1
                slowest = max(slowest or 0.0, float(record.get("duration") or 0.0))
            elif outcome in ("skipped", "xfailed"):
                report.skipped += 1
                if outcome == "xfailed" and record.get("on_assertion"):
                    report.xfailed_on_assertion.append(nodeid)
            else:
                report.failed += outcome == "failed"
                report.errors += outcome != "failed"
                failure = _test_failure(record, workspace)
                report.failures.append(failure)
                if HUNG_MARK not in failure.message:  # a hang's time says nothing of the fixed test's
                    slowest_fail = max(slowest_fail or 0.0, float(record.get("duration") or 0.0))
    for record in begun.values():  # the process ended inside this test
        report.errors += 1
        report.failures.append(_unfinished(record, workspace, hang_dump))
    unclean = _unclean(records)
    if unclean and not begun:  # a test that ended the process says so already
        report.errors += 1
        report.failures.append(TestFailure(nodeid=SESSION_NODEID, file="", line=1, message=unclean, kind="error"))
    report.test_files = sorted(set(report.test_files))
    report.slowest_pass_s = slowest
    report.slowest_fail_s = slowest_fail
    for failure in report.failures:  # a collection error (its file's id) or a test that ended the process
        report.outcomes.setdefault(failure.nodeid, "failed" if failure.kind == "failure" else "error")
    return report


def _rel(path: str, workspace: Path) -> str:
    return _frame(path, 0, workspace).path


def _nodeid(record: dict, file: str) -> str:
    rest = record["nodeid"].split("::", 1)[1] if "::" in record["nodeid"] else ""
    return f"{file}::{rest}" if rest else file


def _located(frames: list[Frame]) -> list[Frame]:
    """Frames inside the workspace, without our own plugin's."""
    return [f for f in frames if f.inside and ".agentls" not in Path(f.path).parts]


def _frames(record: dict, workspace: Path) -> list[Frame]:
    """Traceback entries outermost first, ending with the crash location; the text's when pytest gave none."""
    frames = [_frame(str(path), int(line), workspace) for path, line in record.get("entries") or []]
    if not frames:
        frames = traceback_frames(record.get("longrepr") or "", workspace)
    crash = record.get("crash")
    if crash:
        last = _frame(crash["path"], int(crash["line"]), workspace)
        if not frames or frames[-1] != last:
            frames.append(last)
    return _located(frames)


def _failure(record: dict, workspace: Path, frames: list[Frame], message: str, kind: Literal["failure", "error"],
             fallback_line: int) -> TestFailure:
    file = _rel(record["path"], workspace)
    in_test = [f for f in frames if f.path == file]
    source = [f for f in frames if not is_protected(f.path)]  # conftest frames are test code too
    return TestFailure(
        nodeid=_nodeid(record, file), file=file, line=in_test[-1].line if in_test else fallback_line,
        message=message.strip()[:2000], traceback=(record.get("longrepr") or "")[-_MAX_TRACEBACK:], kind=kind,
        source_file=source[-1].path if source else None, source_line=source[-1].line if source else None,
    )


def _test_failure(record: dict, workspace: Path) -> TestFailure:
    crash = record.get("crash") or {}
    text = record.get("longrepr") or ""
    lines = text.strip().splitlines()
    message = crash.get("message") or (lines[-1] if lines else record.get("outcome", ""))
    kind: Literal["failure", "error"] = "failure" if record.get("outcome") == "failed" else "error"
    return _failure(record, workspace, _frames(record, workspace), message, kind, record.get("line") or 1)


def _collect_failure(record: dict, workspace: Path) -> TestFailure:
    text = record.get("longrepr") or ""
    lines = text.strip().splitlines()
    crash = record.get("crash") or {}
    message = _message(crash.get("message") or (lines[-1] if lines else "collection error"), text, True)
    return _failure(record, workspace, _frames(record, workspace), message, "error", 1)


def dump_frames(dump: str, test_path: str, workspace: Path) -> list[Frame]:
    """The stack of the thread running the test in a faulthandler dump, outermost first."""
    blocks: list[list[Frame]] = []
    for line in dump.splitlines():
        if line.startswith(("Thread 0x", "Current thread 0x")) or not blocks:
            blocks.append([])
        match = _DUMP_FRAME.search(line)
        if match:
            blocks[-1].append(_frame(match.group("path"), int(match.group("line")), workspace))
    test_file = _rel(test_path, workspace)
    chosen = next((b for b in blocks if any(f.path == test_file for f in b)), blocks[0] if blocks else [])
    return _located(list(reversed(chosen)))  # faulthandler lists the most recent call first


def _unfinished(record: dict, workspace: Path, dump: str) -> TestFailure:
    frames = dump_frames(dump, record["path"], workspace) if dump.strip() else []
    if frames:
        message = ENDED_HUNG
    else:
        message = ENDED_CRASHED
    return _failure({**record, "longrepr": dump}, workspace, frames, message, "error", 1)
