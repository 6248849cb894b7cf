"""Coverage in a run's report: links to coverage.py's HTML reports and a line-by-line comparison.

`agentls gen-tests` journals a `coverage` record before and after its tests
(gentests/coverage_record.py) and keeps coverage.py's own HTML report of each
in the run's folder (`coverage-before/`, `coverage-after/`). The report links
to each index.html and shows the target's statements with what changed: run
before and after, newly run, still not run.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from pathlib import Path
from typing import Any

COVERAGE_DIRS = (("coverage before", "coverage-before"), ("coverage after", "coverage-after"))
MAX_LINES = 3000


@dataclass
class CoverageLine:
    number: int
    text: str
    state: str  # "kept" (run before and after), "new", "missing", "lost", "" (not a statement)


@dataclass
class CoverageView:
    target: str
    before: float
    after: float
    new_lines: int
    lines: list[CoverageLine]


def coverage_links(run_dir: Path, out_dir: Path) -> list[tuple[str, str]]:
    """(label, href relative to `out_dir`) for each coverage report present in `run_dir`."""
    links = []
    for label, name in COVERAGE_DIRS:
        index = Path(run_dir) / name / "index.html"
        if index.is_file():
            links.append((label, Path(os.path.relpath(index.resolve(), Path(out_dir).resolve())).as_posix()))
    return links


def coverage_view(records: list[dict[str, Any]]) -> CoverageView | None:
    """The before/after comparison from a run's `coverage` records; None when the run measured none."""
    by_phase = {r.get("phase"): r for r in records if r.get("type") == "coverage"}
    after = by_phase.get("after") or by_phase.get("before")
    if after is None:
        return None
    before = by_phase.get("before") or {}
    statements = set(after.get("statements") or before.get("statements") or [])
    was, now = set(before.get("covered") or []), set(after.get("covered") or [])
    source = str(after.get("source") or before.get("source") or "")
    lines = []
    for number, text in enumerate(source.splitlines()[:MAX_LINES], start=1):
        state = ""
        if number in statements:
            state = {(True, True): "kept", (False, True): "new", (True, False): "lost"}.get(
                (number in was, number in now), "missing")
        lines.append(CoverageLine(number, text, state))
    return CoverageView(str(after.get("target") or ""), float(before.get("percent") or 0.0),
                        float(after.get("percent") or 0.0), len((now - was) & statements), lines)
