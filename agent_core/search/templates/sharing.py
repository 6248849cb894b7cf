"""Two names for one object where two objects were meant: a chained assignment of a fresh collection, a copy
that shares what it holds.

- `evens = odds = []` binds both names to one list, and every append goes to both: the author meant two
  lists, `evens, odds = [], []`. A chained assignment of a fresh list, dict or set is that bug or a needless
  alias, so `alias_edits` is its own evidence (templates.EVIDENCE_TIER).
- `copy.copy(DEFAULTS)` copies the outer dict only: a change to a nested one changes the original too.
  `deep_copy_edits` makes it `copy.deepcopy(...)`, an ordinary template (a shallow copy is often meant).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from agent_core.search.candidate import Edit
from agent_core.search.linetext import replace, span

_FRESH_CALLS = frozenset({"list", "dict", "set", "bytearray", "defaultdict", "OrderedDict", "Counter", "deque"})


def _fresh(value: ast.expr) -> bool:
    """Whether `value` makes a new mutable collection each time it runs."""
    if isinstance(value, (ast.List, ast.Dict, ast.Set, ast.ListComp, ast.DictComp, ast.SetComp)):
        return True
    func = value.func if isinstance(value, ast.Call) else None
    name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
    return name in _FRESH_CALLS


def alias_edits(text: str, statement: ast.stmt, line: int) -> list[Edit]:
    """(new line, description): a one-line `a = b = <fresh collection>` made `a, b = <it>, <it>`."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) > 1 and statement.lineno == line
            == statement.end_lineno and all(isinstance(t, ast.Name) for t in statement.targets)
            and _fresh(statement.value)):
        return []
    s, _ = span(text, statement.targets[0])
    vs, ve = span(text, statement.value)
    names = [t.id for t in statement.targets]  # type: ignore[attr-defined]
    value = text[vs:ve]
    new = f"{text[:s]}{', '.join(names)} = {', '.join([value] * len(names))}{text[ve:]}"
    return [Edit(line, new, line, f"`{' = '.join(names)}` made {len(names)} collections, not one shared")]


def deep_copy_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `copy.copy(x)` on `line` made `copy.deepcopy(x)`."""
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "copy" \
                and isinstance(node.func.value, ast.Name) and node.func.value.id == "copy" \
                and node.func.lineno == node.func.end_lineno == line:
            s, e = span(text, node.func)
            out.append(Edit(line, replace(text, s, e, "copy.deepcopy"), line,
                            "`copy.copy` -> `copy.deepcopy`: the copy shares what it holds"))
    return out
