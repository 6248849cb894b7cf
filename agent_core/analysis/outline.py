"""A compact outline of a workspace (signatures only, bounded size) to give a model context.

Each Python file becomes a header line followed by the signatures of its
classes and functions, indented by nesting. Files are listed in a stable
order with `focus` files first; the outline stops at `max_chars` and says how
many files it left out.
"""

from __future__ import annotations

import os
from pathlib import Path

from agent_core.analysis.symbols import Symbol, analyse
from agent_core.workspace.ignore import skip_dir


def python_files(workspace: Path) -> list[Path]:
    """Workspace Python files, sorted; hidden and skipped folders (ignore.py) are not entered."""
    out = []
    for dirpath, dirnames, filenames in os.walk(workspace):
        dirnames[:] = [d for d in dirnames if not (d.startswith(".") or skip_dir(d))]
        out.extend(Path(dirpath, name) for name in filenames if name.endswith(".py"))
    return sorted(out)


def file_outline(rel_path: str, source: bytes | str) -> str:
    """The outline block of one file."""
    info = analyse(source)
    lines = [f"# {rel_path}"]
    depth: dict[str, int] = {}
    for symbol in info.symbols:
        level = depth[symbol.parent] + 1 if symbol.parent in depth else 0
        depth[symbol.qualname] = level
        lines.append("    " * level + _summary(symbol))
    return "\n".join(lines)


def _summary(symbol: Symbol) -> str:
    decorators = "".join(f"@{d} " for d in symbol.decorators if len(d) <= 40)
    doc = ""
    if symbol.docstring:
        first = symbol.docstring.splitlines()[0]
        doc = f"  # {first[:80]}"
    return f"{decorators}{symbol.signature}{doc}"


def workspace_outline(workspace: Path, max_chars: int = 4000, focus: list[str] | None = None) -> str:
    """The outline of every Python file, `focus` files (relative paths) first, at most `max_chars`."""
    files = python_files(workspace)
    order = {rel: i for i, rel in enumerate(focus or [])}
    files.sort(key=lambda p: (order.get(p.relative_to(workspace).as_posix(), len(order)), str(p)))
    blocks: list[str] = []
    used = 0
    for index, path in enumerate(files):
        rel = path.relative_to(workspace).as_posix()
        try:
            block = file_outline(rel, path.read_bytes())
        except OSError:
            continue
        if used + len(block) + 1 > max_chars:
            remaining = len(files) - index
            blocks.append(f"# ... {remaining} more file(s) not shown")
            break
        blocks.append(block)
        used += len(block) + 1
    return "\n".join(blocks)
