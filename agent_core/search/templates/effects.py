"""A statement that computes a value and drops it, given the binding it was written for.

`delay * factor` on a line of its own, or `display_param == 99`, has no effect: the author meant `delay *=
factor` and `display_param = 99`. Compilers warn of it (gcc's -Wunused-value, clang's -Wunused-comparison,
pylint's pointless-statement), and real fixes make exactly that edit ("`display_param == 99` has no effect
and I assume it was meant to assign 99", r_e_c_u_r #136; "Fix the bug of misusing comparison as assignment",
bilibili-api #117; "replace a statement by an assignment", pspsdk #291).

A statement without effect is its own evidence (templates.EVIDENCE_TIER): `effect_edits` turns `a OP b` into
`a OP= b` and `a == b` into `a = b`, where `a` is a name, an attribute or a subscript.
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit
from agent_core.search.linetext import span

_TARGETS = (ast.Name, ast.Attribute, ast.Subscript)
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^",
              ast.MatMult: "@"}


def effect_edits(text: str, statement: ast.stmt, line: int) -> list[Edit]:
    """(new line, description): a one-line expression statement `a OP b` or `a == b` (module docstring) made the
    binding it computes for."""
    if not (isinstance(statement, ast.Expr) and statement.lineno == line == statement.end_lineno):
        return []
    value = statement.value
    if isinstance(value, ast.BinOp) and isinstance(value.left, _TARGETS) and type(value.op) in _OPERATORS:
        left, right, made = value.left, value.right, f"{_OPERATORS[type(value.op)]}="
    elif (isinstance(value, ast.Compare) and len(value.ops) == 1 and isinstance(value.ops[0], ast.Eq)
          and isinstance(value.left, _TARGETS)):
        left, right, made = value.left, value.comparators[0], "="
    else:
        return []
    vs, ve = span(text, value)
    ls, le = span(text, left)
    rs, re_ = span(text, right)
    binding = f"{text[ls:le]} {made} {text[rs:re_]}"
    return [Edit(line, text[:vs] + binding + text[ve:], line, f"`{text[vs:ve]}` has no effect: `{binding}`")]
