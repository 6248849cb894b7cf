"""Coverage before and after generated tests, kept line by line for the run report.

Each measurement writes a `coverage` journal record (phase "before" or
"after": the target's statements, the lines the tests ran, the percentage and
the target's source) and keeps coverage.py's own HTML report of it in the run's
folder as `coverage-before/` or `coverage-after/` (see report/coverage.py,
which links them from the run report).
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path
from typing import Any

from agent_core.gentests.driver import DriverResult
from agent_core.workspace.hostread import read_planted_text

SOURCE_CHARS = 200_000  # a larger target is recorded without its text (the HTML report still has it)


def _links(folder: str, names: list[str]) -> list[str]:
    """What copytree leaves out of a folder the sandbox wrote: links (their targets are host files)."""
    return [name for name in names if os.path.islink(os.path.join(folder, name))]


def html_folder(phase: str) -> str:
    return f"coverage-{phase}"


def record(journal: Any, phase: str, root: Path, target: str, result: DriverResult | None) -> float:
    """Journal one measurement and keep its HTML report; returns the percentage (0.0 when not measured)."""
    cov = result.runs[0].coverage if result is not None and result.runs else None
    percent = cov.percent() if cov else 0.0
    if journal is None or not getattr(journal, "enabled", False):
        return percent
    html = None
    if result is not None and result.html_dir is not None:
        dest = Path(journal.dir) / html_folder(phase)
        shutil.rmtree(dest, ignore_errors=True)
        if not result.html_dir.is_symlink():  # the sandbox wrote this folder: its links are never followed
            shutil.copytree(result.html_dir, dest, symlinks=True, ignore=_links)
            html = f"{html_folder(phase)}/index.html"
    source = read_planted_text(root, target, SOURCE_CHARS + 1)
    journal.write("coverage", phase=phase, target=target, percent=percent,
                  statements=cov.statements if cov else [], covered=sorted(cov.covered_lines()) if cov else [],
                  measured=cov is not None, html=html, source=source if len(source) <= SOURCE_CHARS else "")
    return percent
