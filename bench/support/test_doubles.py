"""The tests' helpers that the benchmarks reuse, importable by their own names.

tests/ is not a package: pytest puts it on the import path through
pyproject's `pythonpath`, and its helpers import each other by top-level name
(`scripted_llm` imports `scripted_faults`). Rather than every bench editing
`sys.path`, one finder on `sys.meta_path` answers for exactly the modules
listed here, from their files under tests/, and for nothing else.
"""

from __future__ import annotations

import sys
from importlib.abc import MetaPathFinder
from importlib.machinery import ModuleSpec, PathFinder
from pathlib import Path

TESTS = Path(__file__).resolve().parents[2] / "tests"

# module name -> the folder under tests/ that holds it
HELPERS = {
    "scripted_llm": TESTS,  # the scripted OpenAI-compatible server
    "scripted_faults": TESTS,
    "scripted_stream": TESTS,
    "project_support": TESTS,  # small buggy projects, journal access
    "runs_support": TESTS,
    "containment_payloads": TESTS / "sandbox_containment",  # hostile test files and their host checks
}


class _TestHelpers(MetaPathFinder):
    """Finds the modules of HELPERS in their folders; every other name is left to the usual finders."""

    def find_spec(self, fullname: str, path: object = None, target: object = None) -> ModuleSpec | None:
        folder = HELPERS.get(fullname)
        if folder is None:
            return None
        return PathFinder.find_spec(fullname, [str(folder)])


def install() -> None:
    """Put the finder last on `sys.meta_path` (once), so a helper already on the path (under pytest) wins."""
    if not any(isinstance(finder, _TestHelpers) for finder in sys.meta_path):
        sys.meta_path.append(_TestHelpers())
