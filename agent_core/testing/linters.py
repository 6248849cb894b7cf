"""Other tools' findings: which tool a diagnostic came from, how to run it, how to read its output.

A Plan and fix asked on a diagnostic that is not a failing test (a ruff or
flake8 warning, a mypy or pyright type error) is verified by running the same
tool again on the changed files (`pipeline/toolcheck.py`). This module is the
pure part: the tool named by a diagnostic's `[source]` prefix (the LSP layer
writes `[source] line N: message`), each tool's command line, and a parser
per output format. Parsing is by hand because each tool prints its own
format and none ships a reader for it.
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

TOOLS = ("ruff", "flake8", "mypy", "pyright")
_SOURCE = re.compile(r"^\s*\[([^\]]+)\]")


@dataclass(frozen=True)
class Finding:
    """One finding of a tool, at a workspace-relative file and 1-based line."""

    tool: str
    file: str
    line: int
    code: str
    message: str

    @property
    def key(self) -> tuple[str, str, str]:
        """What identifies a finding across edits (lines move; the file, rule and message do not)."""
        return (self.file, self.code, self.message)


def tool_of(diagnostic: str) -> str | None:
    """The known tool a diagnostic line names in its `[source]` prefix ("Ruff", "Pylance/pyright" count)."""
    match = _SOURCE.match(diagnostic)
    if not match:
        return None
    source = match.group(1).lower()
    return next((tool for tool in TOOLS if tool in source), None)


def diagnostic_tools(diagnostics: list[str]) -> list[str]:
    """The known tools named by the run's diagnostics, in first-seen order."""
    return list(dict.fromkeys(t for t in map(tool_of, diagnostics) if t))


def is_tool_nodeid(nodeid: str) -> bool:
    """A failure made of a tool's finding (`<tool>::<file>::<code>`), never a pytest node id to select."""
    return nodeid.split("::", 1)[0] in TOOLS


def tool_argv(tool: str, python: str, files: list[str]) -> list[str]:
    """The command that checks `files` (workspace-relative) with `tool` through the sandbox's Python."""
    if tool == "ruff":
        return [python, "-m", "ruff", "check", "--output-format=json", "--no-cache", "--exit-zero", *files]
    if tool == "flake8":
        return [python, "-m", "flake8", "--exit-zero", "--format=%(path)s:%(row)d:%(col)d: %(code)s %(text)s", *files]
    if tool == "mypy":
        return [python, "-m", "mypy", "--no-error-summary", "--show-error-codes", "--no-color-output",
                "--cache-dir=/dev/null", *files]
    if tool == "pyright":
        return [python, "-m", "pyright", "--outputjson", *files]
    raise ValueError(f"unknown tool {tool!r}")


def not_installed(output: str, tool: str) -> bool:
    """Whether the tool's run says the tool is not there (Python could not find its module)."""
    return f"No module named {tool}" in output or f"No module named '{tool}'" in output


def _relative(path: str, root: Path) -> str:
    p = Path(path)
    if p.is_absolute():
        try:
            return p.resolve().relative_to(root.resolve()).as_posix()
        except ValueError:
            return p.as_posix()
    return p.as_posix().removeprefix("./")


def _ruff(out: str, root: Path) -> list[Finding]:
    items = json.loads(out[out.index("["):])  # "[]" when clean: no list at all is not ruff's answer
    return [Finding("ruff", _relative(i["filename"], root), int(i["location"]["row"]), str(i.get("code") or ""),
                    i["message"]) for i in items]


_LINE = re.compile(r"^(?P<file>[^:\n]+\.pyi?):(?P<line>\d+):(?:\d+:)?\s*(?P<rest>.*)$", re.MULTILINE)
_MYPY_CODE = re.compile(r"\s+\[(?P<code>[a-z0-9-]+)\]\s*$")


def _flake8(out: str, root: Path) -> list[Finding]:
    found = []
    for m in _LINE.finditer(out):
        code, _, message = m["rest"].partition(" ")
        found.append(Finding("flake8", _relative(m["file"], root), int(m["line"]), code, message.strip()))
    return found


def _mypy(out: str, root: Path) -> list[Finding]:
    found = []
    for m in _LINE.finditer(out):
        severity, _, text = m["rest"].partition(": ")
        if severity.strip() != "error":
            continue  # notes explain the error before them; they are not findings
        code_match = _MYPY_CODE.search(text)
        code = code_match["code"] if code_match else ""
        message = text[: code_match.start()] if code_match else text
        found.append(Finding("mypy", _relative(m["file"], root), int(m["line"]), code, message.strip()))
    return found


def _pyright(out: str, root: Path) -> list[Finding]:
    data = json.loads(out[out.index("{"):])
    return [Finding("pyright", _relative(d["file"], root), int(d["range"]["start"]["line"]) + 1,
                    str(d.get("rule") or ""), d["message"])
            for d in data.get("generalDiagnostics", []) if d.get("severity") == "error"]


PARSERS: dict[str, Callable[[str, Path], list[Finding]]] = {
    "ruff": _ruff, "flake8": _flake8, "mypy": _mypy, "pyright": _pyright,
}


def parse_findings(tool: str, output: str, root: Path) -> list[Finding]:
    """The tool's findings in `output`; raise ValueError when the output is not the tool's format."""
    try:
        return PARSERS[tool](output, root)
    except (KeyError, TypeError, ValueError) as exc:  # ValueError: no JSON at all, or not valid
        raise ValueError(f"{tool}'s output could not be read: {exc}") from exc


def pointed_at(finding: Finding, diagnostics: list[str]) -> bool:
    """Whether one of the tool's diagnostics the user asked about names this finding (by message or rule code)."""
    for text in diagnostics:
        if tool_of(text) != finding.tool:
            continue
        if finding.message and finding.message in text:
            return True
        if finding.code and re.search(rf"\b{re.escape(finding.code)}\b", text):
            return True
    return False
