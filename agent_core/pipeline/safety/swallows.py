"""The swallowing rule over a change set: a change that hides the failing test's error is not a fix.

Applies `analysis/swallowing.py` (a `return`/`break`/`continue` in a
`finally:`, an `__exit__` returning True, an added broad `except` that would
catch the failing tests' exceptions; a change to an assertion helper the project
ships, the tests' own check) to each changed Python file, and names a
change whose only effect is an early `return` (`early_return`). Every door
that can report a change fixed asks this module: the search's candidates
(refused before they are tried), the coder's change (the gate undoes it and
tells the coder), the run's final check (finalize), and a patch verified for
another agent (checks/verify_patch.py).
"""

from __future__ import annotations

__all__ = ["ONLY_EARLY_RETURN", "REFUSED", "early_return_note", "failing_types", "swallowing"]

from pathlib import PurePosixPath

from agent_core.analysis.swallowing import REFUSED, early_return, swallowing_findings, weakened_checks
from agent_core.models import ChangeSet
from agent_core.search import failing_types

ONLY_EARLY_RETURN = "only an early return is green"


def _python(path: str) -> bool:
    return PurePosixPath(path).suffix in (".py", ".pyi")


def swallowing(change_set: ChangeSet, types: list[str]) -> list[str]:
    """`REFUSED: path:line: why` for each construct the change adds that swallows exceptions, and `refused:
    path:line: why` for each assertion helper it changes (the tests' own checks, `weakened_checks`); [] for
    none."""
    out = []
    for change in change_set.changes:
        if change.new is not None and _python(change.path):
            out += [f"{REFUSED}: {change.path}:{line}: {why}"
                    for line, why in swallowing_findings(change.original or "", change.new, types)]
            out += [f"refused: {change.path}:{line}: {why}"
                    for line, why in weakened_checks(change.original or "", change.new)]
    return out


def early_return_note(change_set: ChangeSet) -> str | None:
    """`only an early return is green: path:line ...` when some changed function only gained early returns."""
    for change in change_set.changes:
        if change.new is not None and _python(change.path):
            found = early_return(change.original or "", change.new)
            if found is not None:
                return f"{ONLY_EARLY_RETURN}: {change.path}:{found[0]} {found[1]}"
    return None
