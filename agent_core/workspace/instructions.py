"""The project's own instructions for coding agents: `AGENTS.md`, then `CONVENTIONS.md`.

Many projects keep a file of conventions for AI coding tools at their root
(`AGENTS.md`; aider users name it `CONVENTIONS.md`). Its text goes into the
planner's, coder's and tester's prompts, bounded so that a long file cannot
crowd the code out of a small model's context window.
"""

from __future__ import annotations

import os
import stat
from dataclasses import dataclass
from pathlib import Path

INSTRUCTION_FILES = ("AGENTS.md", "CONVENTIONS.md")
MAX_CHARS = 3000  # about 750 tokens of an 8,192-token context: the bundled model's window


@dataclass(frozen=True)
class ProjectInstructions:
    """The text read, the files it came from, and whether it was cut at MAX_CHARS."""

    text: str
    files: tuple[str, ...]
    truncated: bool


def _read_regular(path: Path, limit: int) -> str | None:
    """At most `limit` characters of a regular file at `path` (not a symlink), or None."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | getattr(os, "O_CLOEXEC", 0))
    except OSError:
        return None
    with os.fdopen(fd, "rb") as handle:
        if not stat.S_ISREG(os.fstat(handle.fileno()).st_mode):
            return None
        data = handle.read(limit * 4 + 4)  # UTF-8: at most 4 bytes a character
    return data.decode("utf-8", errors="replace")


def read_project_instructions(root: Path, limit: int = MAX_CHARS) -> ProjectInstructions | None:
    """The instruction files at the workspace root, joined and cut to `limit` characters; None if there are none."""
    parts: list[str] = []
    files: list[str] = []
    truncated = False
    for name in INSTRUCTION_FILES:
        room = limit - sum(len(p) for p in parts)
        if room <= 0:
            truncated = True
            break
        text = _read_regular(root / name, room + 1)
        if text is None or not text.strip():
            continue
        if len(text) > room:
            text, truncated = text[:room], True
        parts.append(text.strip() + "\n")
        files.append(name)
    if not parts:
        return None
    return ProjectInstructions(text="\n".join(parts), files=tuple(files), truncated=truncated)
