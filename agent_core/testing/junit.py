"""Turn pytest's JUnit XML (family xunit1) into a `TestReport`.

Each failing or erroring `<testcase>` becomes a `TestFailure` located twice:
in the test file (the last traceback frame inside the test's own file, read
from the `path:LINE:` location lines of pytest's longrepr, not the `def`
line) and in the code under test (the innermost frame inside the workspace
that is not a test file). Collection errors (`classname=""`) become errors
on the module, located at the failing import or the SyntaxError's line.
"""

from __future__ import annotations

import re
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from agent_core.models import TestFailure, TestReport
from agent_core.workspace.testfiles import is_protected

_LOCATION = re.compile(r"^(?P<path>[^\s:][^:\n]*\.py):(?P<line>\d+):(?: |$)", re.MULTILINE)
_FILE_LINE = re.compile(r'File "(?P<path>[^"]+\.py)", line (?P<line>\d+)')
_MAX_TRACEBACK = 6000


@dataclass(frozen=True)
class Frame:
    """One location in a traceback, its path relative to the workspace when inside it."""

    path: str
    line: int
    inside: bool


def _frame(raw: str, line: int, workspace: Path) -> Frame:
    path = PurePosixPath(raw)
    if path.is_absolute():
        try:
            return Frame(str(path.relative_to(workspace.as_posix())), line, True)
        except ValueError:
            return Frame(raw, line, False)
    inside = ".." not in path.parts and (workspace / raw).is_file()
    return Frame(str(path), line, inside)


def traceback_frames(text: str, workspace: Path) -> list[Frame]:
    """Frames in order of appearance, outermost first (location lines and `File "..", line N`)."""
    hits = [(m.start(), m.group("path"), int(m.group("line"))) for m in _LOCATION.finditer(text)]
    hits += [(m.start(), m.group("path"), int(m.group("line"))) for m in _FILE_LINE.finditer(text)]
    return [_frame(path, line, workspace) for _, path, line in sorted(hits)]


def _nodeid(case: ET.Element, file: str) -> str:
    classname, name = case.get("classname", ""), case.get("name", "")
    if not classname:
        return file
    module = file[:-3].replace("/", ".") if file.endswith(".py") else ""
    if module and (classname == module or classname.startswith(module + ".")):
        rest = classname[len(module):].lstrip(".")
    else:  # a classname that does not start with the file's module: keep its CamelCase tail (classes)
        parts = classname.split(".")
        while parts and parts[0][:1].islower():
            parts.pop(0)
        rest = ".".join(parts)
    return "::".join([file, *[p for p in rest.split(".") if p], name])


def _case_file(case: ET.Element, workspace: Path) -> str:
    file = case.get("file")
    if file:
        return _frame(file, 0, workspace).path
    classname = case.get("classname") or case.get("name") or ""
    parts = classname.split(".")
    for cut in range(len(parts), 0, -1):
        candidate = "/".join(parts[:cut]) + ".py"
        if (workspace / candidate).is_file():
            return candidate
    return classname.replace(".", "/") + ".py"


def _failure(case: ET.Element, problem: ET.Element, workspace: Path) -> TestFailure:
    file = _case_file(case, workspace)
    text = problem.text or ""
    frames = traceback_frames(text, workspace)
    in_test = [f for f in frames if f.inside and f.path == file]
    def_line = int(case.get("line", "0")) + 1 if case.get("line") else 1
    source = [f for f in frames if f.inside and not is_protected(f.path)]
    lines = text.strip().splitlines()
    message = problem.get("message") or (lines[-1] if lines else "")
    collection = not case.get("classname")
    return TestFailure(
        nodeid=_nodeid(case, file),
        file=file,
        line=in_test[-1].line if in_test else (1 if collection else def_line),
        message=_message(message, text, collection),
        traceback=text[-_MAX_TRACEBACK:],
        kind="error" if problem.tag == "error" else "failure",
        source_file=source[-1].path if source else None,
        source_line=source[-1].line if source else None,
    )


def _message(message: str, text: str, collection: bool) -> str:
    """A one-line-ish message; for collection errors, the `E   ...` line that names the error."""
    if collection:
        errors = [line[1:].strip() for line in text.splitlines() if line.startswith("E ") and line[1:].strip()]
        named = [e for e in errors if re.match(r"^\w+(Error|Exception)\b", e)]
        if named:
            return f"collection error: {named[-1]}"
    return message.strip()[:2000]


def parse_junit(xml_text: str, workspace: Path) -> TestReport:
    """Counts and failures from a JUnit XML document (raises ET.ParseError on bad XML)."""
    root = ET.fromstring(xml_text)
    report = TestReport()
    for case in root.iter("testcase"):
        problem = case.find("failure")
        if problem is None:
            problem = case.find("error")
        if problem is not None:
            if problem.tag == "failure":
                report.failed += 1
            else:
                report.errors += 1
            failure = _failure(case, problem, workspace)
            report.failures.append(failure)
            report.outcomes.setdefault(failure.nodeid, "failed" if problem.tag == "failure" else "error")
            continue
        nodeid = _nodeid(case, _case_file(case, workspace))
        if case.find("skipped") is not None:
            report.skipped += 1
            report.outcomes.setdefault(nodeid, "skipped")
        else:
            report.passed += 1
            report.outcomes.setdefault(nodeid, "passed")
    return report
