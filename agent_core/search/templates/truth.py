"""A value tested for truth where the test meant something else: a position, or "is there a value at all".

- `if text.find("://"):` is true when the text is not found (-1) and false when it starts with it (0): the
  author meant `"://" in text`. A position used as a truth value is the bug whenever the code is written so,
  and its own evidence (templates.EVIDENCE_TIER): `find_edits` (GitSavvy #817, salt #13145, SCons #3209,
  elastic-serverless-forwarder #26).
- `if item.get("quantity"):` skips a quantity of 0, an empty name, an empty list: the author meant "given",
  `is not None`. That is a common fix in real histories (covid19_scenarios_data #28 "don't replace 0 with
  None", commcare-hq #22710, fondant #304, py3status #450), but an `if x:` is most
  often right, so `none_test_edits` is an ordinary template, tried after the single edits. So is its
  twin, `config.get("retries") or 3`, which takes 0 for "not given" too: `or_default_edits` makes it
  `config.get("retries", 3)`, or `x if x is not None else 3` for a value that is not a `.get`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span

_POSITIONS = frozenset({"find", "rfind"})
MAX_NONE_TESTS = 2


def _tested(statement: ast.stmt, nodes: Sequence[ast.AST]) -> list[tuple[ast.expr, bool]]:
    """The expressions `statement` and the `nodes` of its line test for truth, each with whether a `not`
    negates it: an `if`/`while`/`assert`/conditional expression's test, an operand of `and`/`or`, a `not`'s."""
    tests: list[ast.expr] = []
    if isinstance(statement, (ast.If, ast.While, ast.Assert)):
        tests.append(statement.test)
    tests += [n.test for n in nodes if isinstance(n, ast.IfExp)]
    out: list[tuple[ast.expr, bool]] = []
    while tests:
        test = tests.pop(0)
        if isinstance(test, ast.BoolOp):
            tests += test.values
        elif isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            out.append((test.operand, True))
        else:
            out.append((test, False))
    return out


def find_edits(text: str, statement: ast.stmt, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `s.find(x)` tested for truth on `line` made `x in s` (`not s.find(x)`: `x not
    in s`); with a start or end given, `s.find(x, i) != -1`."""
    out: list[Edit] = []
    for test, negated in _tested(statement, nodes):
        if not (isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr in _POSITIONS
                and test.args and not test.keywords and on_line(test, line)):
            continue
        s, e = span(text, test)
        if negated:  # the `not` goes with the call
            s = text.rindex("not", 0, s)
        receiver = text[slice(*span(text, test.func.value))]
        found = text[slice(*span(text, test.args[0]))]
        if len(test.args) == 1:
            new = f"{found} not in {receiver}" if negated else f"{found} in {receiver}"
        else:
            new = f"{text[slice(*span(text, test))]} {'==' if negated else '!='} -1"
        out.append(Edit(line, replace(text, s, e, new), line,
                        f"`{text[s:e]}` tested a position for truth (-1 when not found, 0 at the start): `{new}`"))
    return out


def none_test_edits(text: str, statement: ast.stmt, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): a name, attribute, subscript or `.get(...)` tested for truth on `line` made
    `is not None` (`not x`: `x is None`), so that 0, "" and empty collections count as given."""
    out: list[Edit] = []
    for test, negated in _tested(statement, nodes):
        plain = isinstance(test, (ast.Name, ast.Attribute, ast.Subscript)) or (
            isinstance(test, ast.Call) and isinstance(test.func, ast.Attribute) and test.func.attr == "get")
        if not plain or not on_line(test, line):
            continue
        s, e = span(text, test)
        if negated:
            s = text.rindex("not", 0, s)
        value = text[slice(*span(text, test))]
        new = f"{value} is None" if negated else f"{value} is not None"
        out.append(Edit(line, replace(text, s, e, new), line,
                        f"`{text[s:e]}` -> `{new}`: 0, \"\" and empty values count as given"))
    return out[:MAX_NONE_TESTS]


def or_default_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `x.get(k) or d` on `line` made `x.get(k, d)`, and `x or d` (a name, attribute or
    subscript) made `x if x is not None else d`."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.BoolOp) and isinstance(node.op, ast.Or) and len(node.values) == 2
                and on_line(node, line)):
            continue
        value, default = node.values
        s, e = span(text, node)
        d_text = text[slice(*span(text, default))]
        v_text = text[slice(*span(text, value))]
        if isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute) and value.func.attr == "get" \
                and len(value.args) == 1 and not value.keywords:
            new = f"{v_text[:-1]}, {d_text})"
        elif isinstance(value, (ast.Name, ast.Attribute, ast.Subscript)):
            new = f"{v_text} if {v_text} is not None else {d_text}"
        else:
            continue
        out.append(Edit(line, replace(text, s, e, new), line, f"`{text[s:e]}` -> `{new}`: 0 and \"\" count as given"))
    return out
