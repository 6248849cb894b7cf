"""Helpers of the engine tests: small buggy projects, scripted edits, snapshots and journals."""

from __future__ import annotations

import contextlib
from collections.abc import Callable, Iterator, Mapping
from pathlib import Path

from agent_core.workspace.shadow import ShadowWorkspace
from testkit.project_support import CALC, FIX_EDIT, WRONG_EDIT, CliRun, journal_records, make_project

__all__ = ["BUGGY_CALC", "FIX_EDIT", "WRONG_EDIT", "CliRun", "journal_records", "make_project", "search_fixed",
           "shadowed", "snapshot"]

BUGGY_CALC = {**CALC, "README.md": "A tiny calculator.\n"}


def snapshot(root: Path) -> dict[str, bytes]:
    """Every file's bytes, except the run journal under .agentls/."""
    return {
        p.relative_to(root).as_posix(): p.read_bytes()
        for p in sorted(root.rglob("*"))
        if p.is_file() and ".agentls" not in p.relative_to(root).parts
    }


def search_fixed(root: Path, files: dict[str, str], run_fix: Callable[..., CliRun], base_url: str) -> dict:
    """The project of `files` made at `root`, then `agentls fix ROOT --apply` against `base_url` (a scripted
    endpoint with nothing queued; the caller sets AGENTLS_SEARCH=1): the run must end fixed with no model
    call; the journal's `found` of the search that fixed it."""
    make_project(root, files)
    run = run_fix(str(root), "--base-url", base_url, "--json", "--apply")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    search = next(r for r in journal_records(root, run.json["run_id"]) if r["type"] == "search")
    return search["found"]


@contextlib.contextmanager
def shadowed(folder: Path, files: Mapping[str, str]) -> Iterator[Path]:
    """`files` written into `folder` (a test's own: the sandbox refuses the user's files), and the root of their
    shadow copy while it lasts."""
    for rel, text in files.items():
        (folder / rel).write_text(text)
    with ShadowWorkspace(folder) as shadow:
        yield shadow.root
