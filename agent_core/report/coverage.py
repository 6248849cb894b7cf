"""Links from a run's report to the coverage HTML reports a run left in its directory.

`agentls gen-tests` writes coverage.py's own HTML report of the suite before
and after the generated tests to `<run_dir>/coverage-before/` and
`<run_dir>/coverage-after/`; the run report links to each one's index.html.
"""

from __future__ import annotations

import os
from pathlib import Path

COVERAGE_DIRS = (("coverage before", "coverage-before"), ("coverage after", "coverage-after"))


def coverage_links(run_dir: Path, out_dir: Path) -> list[tuple[str, str]]:
    """(label, href relative to `out_dir`) for each coverage report present in `run_dir`."""
    links = []
    for label, name in COVERAGE_DIRS:
        index = Path(run_dir) / name / "index.html"
        if index.is_file():
            links.append((label, Path(os.path.relpath(index.resolve(), Path(out_dir).resolve())).as_posix()))
    return links
