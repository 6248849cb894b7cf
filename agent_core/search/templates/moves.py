"""A statement moved past its neighbours: the order of two steps was the bug.

No edit of a token says "do this later": the candidates here take the statement on a suspicious line (with
the blank lines and comments after it) and put it after each of the next MAX_STEPS statements of its
block, or before each of the MAX_STEPS before it; and an assignment that opens an `if` testing what it
sets is moved out before the test.
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit

MAX_STEPS = 3  # statements a move may pass, down and up
_ENDS = (ast.Return, ast.Raise, ast.Continue, ast.Break)


def _chunk(lines: list[str], body: list[ast.stmt], index: int) -> list[str]:
    """The lines of `body[index]` and the blank lines and comments after it, up to the next statement."""
    first = _first_line(body[index])
    last = _first_line(body[index + 1]) - 1 if index + 1 < len(body) else body[index].end_lineno or first
    return lines[first - 1 : last]


def is_docstring(statement: ast.stmt) -> bool:
    """Whether `statement` is a bare string: a docstring, which nothing may move above."""
    return isinstance(statement, ast.Expr) and isinstance(statement.value, ast.Constant) and isinstance(
        statement.value.value, str)


def opening_statement(function: ast.FunctionDef | ast.AsyncFunctionDef) -> ast.stmt | None:
    """The first statement of `function`'s body after its docstring, where a statement put first goes; None for
    a one-line function or one that is only its docstring."""
    body = function.body
    first = body[1] if is_docstring(body[0]) and len(body) > 1 else body[0]
    return None if first.lineno <= function.lineno or is_docstring(first) else first


def _first_line(statement: ast.stmt) -> int:
    decorators = getattr(statement, "decorator_list", [])
    return min([statement.lineno, *(d.lineno for d in decorators)])


def move_edits(lines: list[str], body: list[ast.stmt], statement: ast.stmt) -> list[Edit]:
    """(first line, new text, last line, description): `statement` moved down past 1..MAX_STEPS of the
    statements after it in `body`, and up past 1..MAX_STEPS of those before it. Never past the block's end, a
    `return`/`raise`/`continue`/`break` (the moved lines would not run) or a docstring."""
    if statement not in body or isinstance(statement, _ENDS):
        return []
    at = body.index(statement)
    out: list[Edit] = []
    for steps in range(1, MAX_STEPS + 1):  # down
        if at + steps >= len(body) or isinstance(body[at + steps], _ENDS):
            break
        passed = [line for k in range(at + 1, at + steps + 1) for line in _chunk(lines, body, k)]
        moved = _chunk(lines, body, at)
        first, last = _first_line(statement), _first_line(statement) + len(passed) + len(moved) - 1
        out.append(Edit(first, "\n".join([*passed, *moved]), last, f"statement moved below the next {steps}"))
    for steps in range(1, MAX_STEPS + 1):  # up
        if at - steps < 0 or is_docstring(body[at - steps]):
            break
        passed = [line for k in range(at - steps, at) for line in _chunk(lines, body, k)]
        moved = _chunk(lines, body, at)
        first = _first_line(body[at - steps])
        out.append(Edit(first, "\n".join([*moved, *passed]), first + len(passed) + len(moved) - 1,
                    f"statement moved above the previous {steps}"))
    return out



def _reads(node: ast.AST, names: set[str]) -> bool:
    return any(isinstance(n, ast.Name) and n.id in names and isinstance(n.ctx, ast.Load) for n in ast.walk(node))


def hoist_edits(tree: ast.Module, lines: list[str], statement: ast.stmt) -> list[Edit]:
    """(first line, new text, last line, description): an assignment that opens the body of an `if` whose test
    reads the name it sets, moved out before that `if`: the value was tested before it was made what it must
    be (a text tested for emptiness, then cut, which can empty it)."""
    if not isinstance(statement, ast.Assign):
        return []
    names = {n.id for t in statement.targets for n in ast.walk(t) if isinstance(n, ast.Name)}
    parent = next((n for n in ast.walk(tree) if isinstance(n, ast.If) and n.body and n.body[0] is statement), None)
    if parent is None or len(parent.body) < 2 or not _reads(parent.test, names):
        return []
    header = lines[parent.lineno - 1]
    if not header.lstrip().startswith("if "):  # an `elif`: nothing can go between it and its `if`
        return []
    end = statement.end_lineno or statement.lineno
    outer = header[: len(header) - len(header.lstrip())]
    inner = lines[statement.lineno - 1][: len(lines[statement.lineno - 1]) - len(lines[statement.lineno - 1].lstrip())]
    moved = lines[statement.lineno - 1 : end]
    strings = [n for n in ast.walk(statement) if isinstance(n, ast.Constant) and isinstance(n.value, (str, bytes))]
    if any((s.end_lineno or s.lineno) > s.lineno for s in strings) or not all(
            line.startswith(inner) or not line.strip() for line in moved):
        return []  # a string spanning lines would change, or a line is indented less than the statement
    dedented = [outer + line[len(inner):] if line.strip() else line for line in moved]
    kept = lines[parent.lineno - 1 : statement.lineno - 1]  # the `if` line(s), and comments before the statement
    return [Edit(parent.lineno, "\n".join([*dedented, *kept]), end, "statement moved out of the `if` that tests it, "
             "before the test")]
