"""Helpers of the engine tests: small buggy projects, scripted edits, snapshots and journals."""

from __future__ import annotations

from pathlib import Path

from project_support import CALC, FIX_EDIT, WRONG_EDIT, CliRun, journal_records, make_project

__all__ = ["BUGGY_CALC", "FIX_EDIT", "WRONG_EDIT", "CliRun", "journal_records", "make_project", "snapshot"]

BUGGY_CALC = {**CALC, "README.md": "A tiny calculator.\n"}


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file's bytes, except the run journal under .agentls/."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".agentls" not in p.relative_to(root).parts
    }
