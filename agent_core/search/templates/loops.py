"""A loop that goes on after it found what it looked for.

`for index, value in enumerate(values): if value < 0: found = index` keeps the last match, where the first
was meant: the author's fix is a `break` after the binding. `break_edits` adds it after the statements of an
`if` of a loop's body when they only bind names (a search's `found = index`, not a sum's `total += x` or a
collection's `append`), in a loop that has no `break` of its own (nor an `else:`, which a `break` would
skip). An ordinary template (templates.TEMPLATE_TIER): keeping the last match is sometimes what is meant.
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit

_LOOPS = (ast.For, ast.AsyncFor, ast.While)


def _breaks(loop: ast.AST) -> bool:
    """Whether `loop` has a `break` of its own (not one of a loop inside it)."""
    todo = list(ast.iter_child_nodes(loop))
    while todo:
        node = todo.pop()
        if isinstance(node, ast.Break):
            return True
        if not isinstance(node, (*_LOOPS, ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo += ast.iter_child_nodes(node)
    return False


def break_edits(lines: list[str], function: ast.AST | None, statement: ast.stmt) -> list[Edit]:
    """(new lines, description): `break` after the last statement of an `if` (no `else`) inside a loop of
    `function` without a `break` of its own, when the `if`'s body only binds names (`found = index`) and holds
    or follows `statement` (the suspicious line: the `if`'s header, its body, or the loop's header)."""
    if function is None:
        return []
    out: list[Edit] = []
    for loop in (n for n in ast.walk(function) if isinstance(n, _LOOPS)):
        holds = loop.lineno <= statement.lineno <= (loop.end_lineno or loop.lineno)
        if _breaks(loop) or loop.orelse or not holds:
            continue
        for branch in loop.body:
            if not (isinstance(branch, ast.If) and not branch.orelse and all(
                    isinstance(s, ast.Assign) and all(isinstance(t, ast.Name) for t in s.targets)
                    for s in branch.body)):
                continue
            last = branch.body[-1]
            end = last.end_lineno or last.lineno
            text = lines[last.lineno - 1]
            indent = text[: len(text) - len(text.lstrip())]
            out.append(Edit(end, f"{lines[end - 1]}\n{indent}break", end,
                            "`break` once found: the loop kept going and kept the last match"))
    return out
