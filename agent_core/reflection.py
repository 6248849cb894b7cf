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


_LOCATION = re.compile(r"^[\w./-]+\.py:\d+: ")


def _essential(traceback: str, keep: int = 14) -> str:
    """The lines of a pytest traceback that say what failed: the `>` line, `E` lines, `path:line:` lines."""
    lines = [line.rstrip() for line in traceback.splitlines()]
    picked = [line for line in lines if line.lstrip().startswith((">", "E ")) or _LOCATION.match(line.strip())]
    return "\n".join((picked or lines)[-keep:])


def failure_text(report: TestReport, limit: int = 1800) -> str:
    """The failing tests' output trimmed to what a small model needs.

    One entry per failing test function (parametrized cases of one test are
    folded into the first), each with its message and the essential lines of
    its traceback; at most three entries.
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
    parts = []
    for cases in list(groups.values())[:3]:
        f = cases[0]
        folded = f" (and {len(cases) - 1} more case(s) of this test)" if len(cases) > 1 else ""
        parts.append(f"FAILED {f.nodeid} at {f.file}:{f.line}{folded}\n{_essential(f.traceback) or f.message}")
    more = len(groups) - 3
    text = "\n\n".join(parts) + (f"\n\n... and {more} more failing test(s)" if more > 0 else "")
    return text[:limit]
