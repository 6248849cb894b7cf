"""A case the code forgot: a literal set of characters widened with one the failing tests use, and a
comparison with a literal written in one case made blind to case.

Real fixes often add the missing member to a small literal collection: the character is in the failing
test's own strings, the input it builds. So the candidates are, for a tuple, list or set literal of
one-character strings on a suspicious line (or in a module constant the function reads), the punctuation
of the failing tests' string literals that the collection lacks, most frequent first.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, span

MAX_WIDENINGS = 6  # candidates per line
_COLLECTIONS = (ast.Tuple, ast.List, ast.Set)


def widening_edits(text: str, nodes: Sequence[ast.AST], line: int, characters: Sequence[str]) -> list[Edit]:
    """(new line, description) for each bracketed literal of one-character strings on `line` (1-based; `text`
    is the line) widened with one of `characters` it lacks."""
    out: list[Edit] = []
    for node in nodes:
        if not isinstance(node, _COLLECTIONS) or not on_line(node, line) or not node.elts:
            continue
        members = [e.value for e in node.elts if isinstance(e, ast.Constant) and isinstance(e.value, str)]
        if len(members) != len(node.elts) or any(len(m) != 1 for m in members):
            continue
        start, stop = span(text, node)  # character columns (ast's are bytes)
        if text[start : start + 1] not in "([{" or text[stop - 1 : stop] not in ")]}":
            continue  # a tuple without brackets
        lead = text[start + 1 : stop - 1].rstrip().rstrip(",")
        for char in characters:
            if char not in members:
                new = f"{text[:start + 1]}{lead}, {char!r}{text[stop - 1:]}"
                out.append(Edit(line, new, line, f"{char!r} added to the literal collection"))
    return out[:MAX_WIDENINGS]


def constant_widenings(tree: ast.Module, lines: list[str], function: ast.AST,
                       characters: Sequence[str]) -> list[Edit]:
    """(line, new line, description): the module-level constants that `function` reads (in its body or as a
    parameter's default, `escape=_basic_escapes`) and whose one-line definition holds a bracketed literal of
    characters, widened as `widening_edits` does (`_escapes = CONTROL_CHARS | {'"'}`): such a
    constant's line runs at import, so coverage never points at it; the function that reads it does."""
    if not characters:
        return []
    used = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Load)}
    out: list[Edit] = []
    for stmt in tree.body:
        if not (isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name)
                and stmt.targets[0].id in used and stmt.lineno == stmt.end_lineno):
            continue
        text = lines[stmt.lineno - 1]
        out += [Edit(e.first, e.text, e.last, f"{e.description} `{stmt.targets[0].id}`")
                for e in widening_edits(text, list(ast.walk(stmt)), stmt.lineno, characters)]
    return out[:MAX_WIDENINGS]


def cased(value: object) -> str | None:
    """`upper` or `lower` for a string literal written in one case (with at least one letter), else None."""
    if not isinstance(value, str) or not any(c.isalpha() for c in value):
        return None
    return "upper" if value == value.upper() else "lower" if value == value.lower() else None


def other_case(literal: object, words: frozenset[str]) -> bool:
    """Whether a failing test's input writes the string `literal` in another case (`create` for 'CREATE'): the
    evidence that a comparison with it must be blind to case."""
    return isinstance(literal, str) and any(w != literal and w.casefold() == literal.casefold() for w in words)


def case_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): a comparison of a value with a literal written in one case made blind to the
    value's case: `tok.value == 'CREATE'` -> `tok.value.upper() == 'CREATE'` (lower-case keywords
    written by a user), `name in ('a', 'b')` -> `name.lower() in ('a', 'b')`."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Compare) and on_line(node, line) and len(node.ops) == 1
                and isinstance(node.ops[0], (ast.Eq, ast.NotEq, ast.In, ast.NotIn))):
            continue
        right = node.comparators[0]
        members = right.elts if isinstance(right, (ast.Tuple, ast.List, ast.Set)) else [right]
        cases = {cased(m.value) if isinstance(m, ast.Constant) else None for m in members}
        if len(cases) != 1 or None in cases or isinstance(node.left, ast.Constant) or not on_line(node.left, line):
            continue
        case = cases.pop()
        start, stop = span(text, node.left)
        left = text[start:stop]
        if not isinstance(node.left, (ast.Name, ast.Attribute, ast.Subscript, ast.Call)):
            left = f"({left})"
        new = f"{text[:start]}{left}.{case}(){text[stop:]}"
        out.append(Edit(line, new, line, f"`{text[start:stop]}` compared as {case} case"))
    return out
