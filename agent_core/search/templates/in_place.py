"""The result of a method that changes its object in place and returns None, bound to a name.

`unique = unique.sort(key=str.lower)` leaves `unique` None; so does `merged = defaults.copy().update(user)`.
Pylint has a check of its own for it (assignment-from-none), and the fixes authors make are few: the call
kept and the binding dropped when it rebinds the object itself (`unique.sort(key=str.lower)`), `sorted(...)`
for a sort that was meant to make a new list, or the object bound first and then changed (`merged =
defaults.copy()`, `merged.update(user)`).

The receiver's type is not known statically (a query builder's `.sort()` may return itself), so
`in_place_edits` is evidence (templates.EVIDENCE_TIER) when a failing test's message shows None, and an
ordinary template otherwise.
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit
from agent_core.search.linetext import span

# list, dict and set methods that change their object and return None
IN_PLACE = frozenset({"sort", "reverse", "append", "extend", "insert", "update", "add", "discard", "remove",
                      "clear"})


def in_place_edits(text: str, statement: ast.stmt, line: int) -> list[Edit]:
    """(new lines, description): a one-line `target = receiver.method(...)` of an IN_PLACE method rewritten so
    the target holds the changed object (module docstring)."""
    if not (isinstance(statement, ast.Assign) and statement.lineno == line == statement.end_lineno
            and len(statement.targets) == 1):
        return []
    call, target = statement.value, statement.targets[0]
    if not (isinstance(call, ast.Call) and isinstance(call.func, ast.Attribute) and call.func.attr in IN_PLACE
            and isinstance(target, (ast.Name, ast.Attribute))):
        return []
    method = call.func.attr
    indent = text[: len(text) - len(text.lstrip())]
    s, e = span(text, target)
    bound = text[s:e]
    rs, re_ = span(text, call.func.value)
    receiver = text[rs:re_]
    opened = text.index("(", span(text, call.func)[1]) + 1
    arguments = text[opened : span(text, call)[1] - 1]
    why = f"`.{method}()` changes its object and returns None"
    if receiver == bound:
        return [Edit(line, f"{indent}{receiver}.{method}({arguments})", line, f"{why}: its result no longer bound")]
    out: list[Edit] = []
    if method == "sort":
        given = f"{receiver}, {arguments}" if arguments.strip() else receiver
        out.append(Edit(line, f"{indent}{bound} = sorted({given})", line, f"{why}: `sorted({receiver}, ...)` bound"))
    out.append(Edit(line, f"{indent}{bound} = {receiver}\n{indent}{bound}.{method}({arguments})", line,
                    f"{why}: `{bound}` bound to the object, then changed"))
    return out
