"""The `.agentls/` directory agentls keeps in a workspace (journals, memory, checkpoints, previews).

It is agentls' own state, never the user's source: like `.pytest_cache/` or
`.ruff_cache/`, it carries a `.gitignore` of `*` so that `git status` stays
clean and nothing of it is committed by accident.
"""

from __future__ import annotations

import contextlib
from pathlib import Path

STATE_DIR = ".agentls"
_GITIGNORE = "# agentls' own state (journals, memory, checkpoints): never commit it\n*\n"


def ensure_state_dir(workspace: Path) -> Path:
    """`<workspace>/.agentls`, created with its `.gitignore` when missing."""
    state = Path(workspace) / STATE_DIR
    state.mkdir(parents=True, exist_ok=True)
    ignore = state / ".gitignore"
    if not ignore.exists():
        with contextlib.suppress(OSError):  # a read-only or odd workspace still gets its run
            ignore.write_text(_GITIGNORE, encoding="utf-8")
    return state
