"""Where an ast node sits in one source line, and a line with a part replaced: shared by the candidate modules."""

from __future__ import annotations

import ast


def col(text: str, byte_col: int) -> int:
    """ast's UTF-8 byte column as a character column of `text`."""
    return len(text.encode("utf-8")[:byte_col].decode("utf-8", errors="ignore"))


def span(text: str, node: ast.AST) -> tuple[int, int]:
    """`node`'s start and end as character columns of `text` (the line it sits on)."""
    return col(text, node.col_offset), col(text, node.end_col_offset)  # type: ignore[attr-defined]


def on_line(node: ast.AST, line: int) -> bool:
    """Whether `node` starts and ends on `line`."""
    return getattr(node, "lineno", None) == line and getattr(node, "end_lineno", None) == line


def replace(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]
