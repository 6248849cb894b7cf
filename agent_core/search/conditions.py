"""A condition swapped for another the function already tests.

A real fix often keeps an `if` and changes what it asks: tomlkit 0.11.5 replaced `if item.name != key.key:`
(which held for a nested table's dotted name as well) by `if not self._parsed:`, a test the same method makes
three lines further down. The single-edit catalogue changes a condition one token at a time; it cannot
bring in another whole condition. The candidates here are the function's own tests: the conditions of its
`if`, `while` and conditional expressions and the operands of its `and`/`or`, each as it is written and
negated, the nearest to the line first.
"""

from __future__ import annotations

import ast

from agent_core.analysis import pysyntax
from agent_core.search.linetext import span

MAX_CONDITIONS = 6  # other conditions per `if`: each is tried as written and negated


def _tests(function: ast.AST) -> list[ast.expr]:
    """The conditions `function` tests: its `if`/`while`/`assert`/conditional-expression tests and the
    operands of its boolean operators, one line each."""
    out: list[ast.expr] = []
    for node in ast.walk(function):
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            out.append(node.test)
        elif isinstance(node, ast.BoolOp):
            out += node.values
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            out.append(node.operand)
    # `not x` is tried as the negation of x, which is among them: not kept itself
    return [e for e in out
            if e.lineno == e.end_lineno and not (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not))]


def _comprehended(function: ast.AST) -> set[str]:
    """Names bound only inside a comprehension or a lambda: a condition using one means nothing elsewhere."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.comprehension):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            names |= {a.arg for a in node.args.args}
    return names


def condition_swaps(lines: list[str], statement: ast.stmt, function: ast.AST) -> list[tuple[str, str]]:
    """(new line, description): the one-line test of the `if`/`elif`/`while` `statement` replaced by another
    condition of `function`, as written and negated, at most MAX_CONDITIONS of them: single tests before
    combinations (a whole `and`/`or`), the nearest first."""
    if not isinstance(statement, (ast.If, ast.While)) or statement.test.lineno != statement.test.end_lineno:
        return []
    line = statement.test.lineno
    text = lines[line - 1]
    start, end = span(text, statement.test)
    own = text[start:end]
    local = _comprehended(function)
    nearest: dict[str, tuple[bool, int]] = {}  # each condition once, at its occurrence nearest the line
    for test in _tests(function):
        if test is statement.test or any(isinstance(n, ast.Name) and n.id in local for n in ast.walk(test)):
            continue
        a, b = span(lines[test.lineno - 1], test)
        condition = lines[test.lineno - 1][a:b]
        if condition in own:  # the test itself or a part of it: the catalogue's edits
            continue
        rank = (isinstance(test, ast.BoolOp), abs(test.lineno - line))
        nearest[condition] = min(rank, nearest.get(condition, rank))
    # one test before a combination of them, then the nearest
    found = sorted(nearest, key=lambda condition: nearest[condition])
    out: list[tuple[str, str]] = []
    for condition in found[:MAX_CONDITIONS]:
        wrapped = condition if _atomic(condition) else f"({condition})"
        for new in (condition, f"not {wrapped}"):
            if new != own:
                out.append((f"{text[:start]}{new}{text[end:]}", f"`{own}` -> `{new}`, a test the function makes"))
    return out


def _atomic(condition: str) -> bool:
    """Whether `not` can go before `condition` without brackets: a name, attribute, call or subscript."""
    try:
        node = pysyntax.parse_expression(condition).body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
