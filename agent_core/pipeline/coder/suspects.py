"""Suspects: the functions (and lines) the failing tests point at, best first.

The state key `suspects` is filled by fault localization when it runs; until
then (and whenever it is empty) the coder derives the same list from the
failing tests alone:

- a traceback's innermost frame in the code under test
  (`TestFailure.source_file/source_line`): that line and its enclosing
  function, weight 1 per failing test;
- otherwise the names called on the failing test's own line (an `assert
  f(x) == y` that fails has no frame in `f`): the functions of that name in
  the modules the test file imports, weight 0.5.

A suspect is `{"file", "function" (qualified name, "" at module level),
"start_line", "end_line", "lines" (suspicious lines, best first), "score"}`.
"""

from __future__ import annotations

import re
from collections import defaultdict
from pathlib import PurePosixPath
from typing import Any

from agent_core.analysis.symbols import Symbol, analyse
from agent_core.models import TestFailure, TestReport
from agent_core.pipeline.context import python_files
from agent_core.pipeline.state import SuspectNote
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.testfiles import is_test_file

FRAME_WEIGHT = 1.0
CALLED_WEIGHT = 0.5
_WORD = re.compile(r"[A-Za-z_]\w*")
_FUNCTIONS = ("function", "method")


def _symbols(shadow: ShadowWorkspace, rel: str, cache: dict[str, list[Symbol]]) -> list[Symbol]:
    if rel not in cache:
        text = shadow.readable(rel)
        cache[rel] = analyse(text).symbols if text else []
    return cache[rel]


def _enclosing(symbols: list[Symbol], line: int) -> Symbol | None:
    """The innermost function or method holding 1-based `line`."""
    inside = [s for s in symbols if s.kind in _FUNCTIONS and s.start_line <= line <= s.end_line]
    return max(inside, key=lambda s: s.start_line, default=None)


def _module_files(shadow: ShadowWorkspace, test_rel: str, cache: dict[str, list[Symbol]]) -> list[str]:
    """Source files the test file imports (by dotted module name, any source root)."""
    text = shadow.readable(test_rel) or ""
    modules = set()
    for imp in analyse(text).imports:
        modules.add(imp.module)
        if imp.name and imp.name != "*":
            modules.add(f"{imp.module}.{imp.name}")
    found = []
    for rel in python_files(shadow):
        if is_test_file(rel):
            continue
        dotted = ".".join(PurePosixPath(rel).with_suffix("").parts).removesuffix(".__init__")
        if any(m and (dotted == m or dotted.endswith("." + m)) for m in modules):
            found.append(rel)
    return found


def _failing_line(shadow: ShadowWorkspace, failure: TestFailure) -> str:
    lines = (shadow.readable(failure.file) or "").splitlines()
    return lines[failure.line - 1] if 0 < failure.line <= len(lines) else ""


def _add(found: dict[tuple[str, str], dict[str, Any]], rel: str, symbol: Symbol | None, line: int | None,
         weight: float) -> None:
    key = (rel, symbol.qualname if symbol else "")
    entry = found.setdefault(key, {"file": rel, "function": key[1], "score": 0.0, "lines": defaultdict(float),
                                   "start_line": symbol.start_line if symbol else line or 1,
                                   "end_line": symbol.end_line if symbol else line or 1})
    entry["score"] += weight
    if line:
        entry["lines"][line] += weight


def _called(shadow: ShadowWorkspace, failure: TestFailure, found: dict[tuple[str, str], dict[str, Any]],
            cache: dict[str, list[Symbol]]) -> None:
    names = set(_WORD.findall(_failing_line(shadow, failure)))
    if not names:
        return
    for rel in _module_files(shadow, failure.file, cache):
        for symbol in _symbols(shadow, rel, cache):
            if symbol.kind in _FUNCTIONS and symbol.name in names:
                _add(found, rel, symbol, None, CALLED_WEIGHT)


def suspects_from_report(shadow: ShadowWorkspace, report: TestReport | None) -> list[SuspectNote]:
    """Suspects (see the module docstring) from the failing tests of `report`, best first."""
    found: dict[tuple[str, str], dict[str, Any]] = {}
    cache: dict[str, list[Symbol]] = {}
    for failure in report.failures if report else []:
        source = failure.source_file
        if source and failure.source_line and not is_test_file(source) and shadow.readable(source) is not None:
            symbol = _enclosing(_symbols(shadow, source, cache), failure.source_line)
            _add(found, source, symbol, failure.source_line, FRAME_WEIGHT)
        elif failure.file and failure.line:
            _called(shadow, failure, found, cache)
    out = []
    for entry in found.values():
        lines = sorted(entry["lines"], key=lambda n: (-entry["lines"][n], n))
        out.append(SuspectNote(file=entry["file"], function=entry["function"], start_line=entry["start_line"],
                               end_line=entry["end_line"], lines=lines, score=round(entry["score"], 3)))
    return sorted(out, key=lambda s: (-s["score"], s["file"], s["start_line"]))
