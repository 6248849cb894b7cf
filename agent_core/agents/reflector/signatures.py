"""The deterministic half of reflection: classify a failure and normalise its signature.

The signature is what "the same failure again" means: category, exception
type, the message with paths, line numbers, hex addresses, numbers and quoted
values stripped, and the test's node id. Two runs that fail the same way on
different values give the same signature; that triggers a replan.
"""

from __future__ import annotations

import re

from agent_core.models import TestFailure, TestReport

CATEGORIES = (
    "import", "attribute", "name", "type", "assertion", "syntax", "timeout", "sandbox_limit", "collection", "other",
)

_EXC_CATEGORY = {
    "ImportError": "import", "ModuleNotFoundError": "import", "AttributeError": "attribute",
    "NameError": "name", "UnboundLocalError": "name", "TypeError": "type", "AssertionError": "assertion",
    "SyntaxError": "syntax", "IndentationError": "syntax", "TabError": "syntax",
    "TimeoutError": "timeout",
}
_EXC_NAME = re.compile(r"\b([A-Z][A-Za-z0-9_]*(?:Error|Exception|Exit|Interrupt))\b")


def exception_type(failure: TestFailure) -> str:
    """The exception class named in the failure's message or traceback, '' if none."""
    for text in (failure.message, _last_error_line(failure.traceback), failure.traceback):
        match = _EXC_NAME.search(text or "")
        if match:
            return match.group(1)
    if (failure.message or "").lstrip().startswith("assert"):
        return "AssertionError"
    return ""


def _last_error_line(traceback: str) -> str:
    lines = [line for line in (traceback or "").splitlines() if line.startswith("E ")]
    return lines[-1] if lines else ""


def classify(failure: TestFailure, report: TestReport | None = None) -> str:
    """One of CATEGORIES for this failure."""
    if report is not None and report.timed_out:
        return "timeout"
    if report is not None and report.limit_hit:
        return "sandbox_limit"
    exc = exception_type(failure)
    if exc in ("SyntaxError", "IndentationError", "TabError"):
        return "syntax"
    if failure.kind == "error" and ("collect" in failure.message.lower() or "collect" in failure.nodeid.lower()):
        return "collection" if exc not in _EXC_CATEGORY else _EXC_CATEGORY[exc]
    if exc in _EXC_CATEGORY:
        return _EXC_CATEGORY[exc]
    if "timeout" in (failure.message or "").lower():
        return "timeout"
    return "collection" if failure.kind == "error" and not failure.nodeid.count("::") else "other"


_NORMALISERS = (
    (re.compile(r"0x[0-9a-fA-F]+"), "<addr>"),
    (re.compile(r"(?:[A-Za-z]:)?(?:[\w.\-]*[/\\])+[\w.\-]+"), "<path>"),
    (re.compile(r"\bline \d+"), "line <n>"),
    (re.compile(r":\d+\b"), ":<n>"),
    (re.compile(r"'(?:[^'\\]|\\.)*'"), "<str>"),
    (re.compile(r'"(?:[^"\\]|\\.)*"'), "<str>"),
    (re.compile(r"\b\d+(?:\.\d+)?(?:e[+-]?\d+)?\b"), "<num>"),
    (re.compile(r"\s+"), " "),
)


def normalise_message(message: str) -> str:
    """The message with volatile parts replaced by placeholders, first line only, bounded."""
    text = (message or "").strip().splitlines()[0] if (message or "").strip() else ""
    for pattern, repl in _NORMALISERS:
        text = pattern.sub(repl, text)
    return text.strip()[:200]


def signature(failure: TestFailure, report: TestReport | None = None) -> str:
    """category|exception|normalised message|nodeid (parametrisation values stripped)."""
    nodeid = re.sub(r"\[.*\]$", "[]", failure.nodeid)
    return "|".join((classify(failure, report), exception_type(failure), normalise_message(failure.message), nodeid))


def report_signature(report: TestReport) -> str:
    """Signature of a whole failing run (its failures' signatures, sorted)."""
    if report.timed_out:
        return "timeout"
    if report.limit_hit:
        return f"sandbox_limit|{report.limit_hit}"
    if not report.failures:
        return f"other|exit {report.exit_code}|{normalise_message(report.output[-300:])}"
    return " || ".join(sorted({signature(f, report) for f in report.failures}))


_LOCATION = re.compile(r"^(?P<path><frozen [^>]+>|[^\s:][^:\n]*\.py):(?P<line>\d+):(?P<rest>(?: .*)?)$")
_INTERNAL = re.compile(
    r"^<frozen |(?:^|/)(?:site-packages|dist-packages|_pytest|importlib|pluggy)/|(?:^|/)agentls-site-[^/]*/"
    r"|/lib/python3[\d.]*/"
)
_ABS_PY = re.compile(r"/[^\s\"':]+\.py")
_LINE_MAX = 240
# pytest's advice to a human at a terminal, not a fact about the failure.
_PYTEST_HINT = re.compile(r"^E\s+(Use -v+ to get (more|the full) diff|\.\.\.Full output truncated .*)$")


def is_internal_path(path: str) -> bool:
    """True for frames in pytest, importlib, the standard library or installed packages (not the workspace)."""
    return bool(_INTERNAL.search(path))


def _location(line: str) -> tuple[bool, str, str] | None:
    """(inside the workspace, 'path:line', what follows) of a traceback location line, None otherwise."""
    match = _LOCATION.match(line.strip())
    if match is None:
        return None
    return not is_internal_path(match["path"]), f"{match['path']}:{match['line']}", match["rest"].strip()


def _essential(traceback: str, keep: int = 14, at: str = "") -> str:
    """The lines of a pytest traceback that say what failed, in the workspace's own files only.

    Kept: `E` lines (error, assertion diff, a SyntaxError's file/source/caret),
    `>` lines and location lines of workspace frames, and the source line of a
    workspace frame printed in pytest's short style (`path:N: in f` then the
    line). Dropped: every frame in pytest, importlib, `<frozen ...>`, the
    standard library or site-packages, `^^^` markers, blank `E` lines, pytest's "Use -v" hints, and a
    bare location equal to `at` (the header already says it).
    """
    picked: list[str] = []
    pending: list[str] = []  # a long-style frame's `>`/`E` lines, until its location line says whose they are
    want_source = False
    repeats = 0  # a recursion repeats one short-style frame many times: shown once, then counted
    for raw in traceback.splitlines():
        line = raw.rstrip()
        loc = _location(line)
        if loc is not None and repeats and picked[-2:-1] != [line.strip()]:
            picked.append(f"    (the frame above repeats {repeats} more time(s))")
            repeats = 0
        if loc is not None:
            inside, where, rest = loc
            if rest.startswith("in ") and inside and not pending and line.strip() in picked[-2:-1]:
                repeats += 1
                want_source = False
                continue
            if rest.startswith("in "):  # short style: the location first, its source line next
                picked.extend(pending)
                picked.extend([line.strip()] if inside else [])
            else:  # long style: the location closes the frame shown above it
                picked.extend(x for x in pending if inside or x.startswith("E"))
                picked.extend([line.strip()] if inside and (rest or where != at) else [])
            pending, want_source = [], inside and rest.startswith("in ")
        elif line.startswith("E ") and line[1:].strip() and not _PYTEST_HINT.match(line):
            pending.append(line)
        elif line.lstrip().startswith(">"):
            pending.append(line)
        elif want_source and line.strip() and not set(line.strip()) <= set("^~"):
            picked.append(line)
            want_source = False
    picked.extend([f"    (the frame above repeats {repeats} more time(s))"] if repeats else [])
    picked.extend(pending)
    return "\n".join(x if len(x) <= _LINE_MAX else x[:_LINE_MAX] + "..." for x in picked[-keep:])


def _relative_paths(text: str, known: set[str]) -> str:
    """Absolute paths into the workspace (as the sandbox saw it) shortened to the workspace-relative ones."""
    roots = {
        path[: -len(rel)]
        for path in _ABS_PY.findall(text)
        for rel in known
        if rel and path.endswith("/" + rel) and len(path) > len(rel) + 1
    }
    for root in sorted(roots, key=len, reverse=True):
        text = text.replace(root, "")
    return text


def _entry(f: TestFailure, cases: int, known: set[str]) -> str:
    """One failing test's block: a header line and the essential traceback lines."""
    folded = f" (and {cases - 1} more case(s) of this test)" if cases > 1 else ""
    collection = f.kind == "error" and "::" not in f.nodeid
    header = f"ERROR collecting {f.nodeid}" if collection else f"FAILED {f.nodeid} at {f.file}:{f.line}{folded}"
    body = _essential(f.traceback, at=f"{f.file}:{f.line}") or f.message
    return _relative_paths(f"{header}\n{body}", known)


def failure_text(report: TestReport, limit: int = 1800) -> str:
    """The failing tests' output trimmed to what a small model needs.

    One entry per failing test function (parametrized cases of one test are
    folded into the first), each with the essential lines of its traceback
    (workspace frames only, see `_essential`); at most three entries.
    """
    if report.timed_out:
        return "The test run timed out (an infinite loop or a very slow test)."
    if report.limit_hit:
        return f"The test run hit the sandbox's {report.limit_hit} limit."
    if not report.failures:
        tail = report.output.strip()[-limit:]
        return f"The test command failed (exit code {report.exit_code}) without test results:\n{tail}"
    groups: dict[str, list] = {}
    for f in report.failures:
        groups.setdefault(f.nodeid.split("[", 1)[0], []).append(f)
    known = {p for f in report.failures for p in (f.file, f.source_file) if p}
    parts = [_entry(cases[0], len(cases), known) for cases in list(groups.values())[:3]]
    more = len(groups) - 3
    text = "\n\n".join(parts) + (f"\n\n... and {more} more failing test(s)" if more > 0 else "")
    return text[:limit]
