"""A single-edit fix in words: the smallest expression around the edit, before and after.

`range(1, n)` -> `range(1, n + 1)` reads better in a code action's title than
the mutant's own description (`n` -> `n + 1`): the edit is shown inside the
innermost call, comparison, boolean or arithmetic expression, subscript or
negation of the original line that contains it. When no such expression
holds the edit (a statement inserted, a keyword changed), the changed line
itself is shown, and the mutant's description when that is too long. A change
that leaves a variable unused or drops a parameter's use says so after it.
"""

from __future__ import annotations

import ast

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Mutant
from agent_core.search.driver.ranking import concerns

MAX_SHOWN = 60  # characters of one side of the change; longer falls back to the mutant's description
_EXPRESSIONS = (ast.Call, ast.Compare, ast.BoolOp, ast.BinOp, ast.UnaryOp, ast.Subscript)


def changed_span(before: str, after: str) -> tuple[int, int, int]:
    """(start, end in `before`, end in `after`): the columns outside the common prefix and suffix."""
    start = 0
    limit = min(len(before), len(after))
    while start < limit and before[start] == after[start]:
        start += 1
    tail = 0
    while tail < limit - start and before[-1 - tail] == after[-1 - tail]:
        tail += 1
    return start, len(before) - tail, len(after) - tail


def _columns(line_text: str, node: ast.expr) -> tuple[int, int]:
    """ast's UTF-8 byte offsets as character columns of `line_text`."""
    raw = line_text.encode("utf-8")
    start = len(raw[: node.col_offset].decode("utf-8", errors="ignore"))
    end = len(raw[: node.end_col_offset].decode("utf-8", errors="ignore"))
    return start, end


def enclosing_expression(source: str, line: int, start: int, end: int) -> tuple[int, int] | None:
    """Columns of the innermost expression of `_EXPRESSIONS` on `line` (1-based) holding columns [start, end)."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return None
    text = source.split("\n")[line - 1]
    best: tuple[int, int] | None = None
    for node in ast.walk(tree):
        if not isinstance(node, _EXPRESSIONS) or node.lineno != line or node.end_lineno != line:
            continue
        s, e = _columns(text, node)
        if s <= start and end <= e and (best is None or e - s < best[1] - best[0]):
            best = (s, e)
    return best


def describe_change(source: str, line: int, after: str, fallback: str) -> str:
    """"`before` -> `after`" for line `line` of `source` replaced by `after` (which may hold several lines), with
    what the change leaves wrong when it does ("; leaves `l_bar_user` unused", search/driver/ranking.py): a green fix
    that may overfit the tests says so in the editor's title too."""
    shown = _shown(source, line, after, fallback)
    found = concerns(source, Mutant("", line, after, shown))
    return f"{shown}; {', '.join(found)}" if found and not all(c in shown for c in found) else shown


def _shown(source: str, line: int, after: str, fallback: str) -> str:
    before = source.split("\n")[line - 1]
    if "\n" not in after:
        start, end_before, end_after = changed_span(before, after)
        found = enclosing_expression(source, line, start, end_before)
        if found is not None:
            s, e = found
            old, new = before[s:e], after[s:e + (end_after - end_before)]
            if max(len(old), len(new)) <= MAX_SHOWN:
                return f"`{old}` -> `{new}`"
        old, new = before.strip(), after.strip()
        if max(len(old), len(new)) <= MAX_SHOWN:
            return f"`{old}` -> `{new}`"
    return fallback
