"""The model's own conditions turned round: a fill that writes a condition is tried negated too.

A small model that writes a condition often writes the right test the wrong way round. Asked for the clause
of `if value and all(isinstance(v, dict) for v in value) and <hole>:` in a real tomlkit bug (a dict in a list
in a list written as an array of tables), the bundled model wrote `isinstance(_parent, Array)`; the same
clause negated passes the project's whole suite (2026-12-06, a probe of 24 samples, idle machine). The
answers of code models are often a small edit away from a right one, and mutation-style repair mends them
(Fan, Gao, Mirchev, Roychoudhury and Tan, "Automated Repair of Programs from Large Language Models",
ICSE 2023). The catalogue already turns a suspect line's own condition round (line_mutants.py, tier 7);
what it cannot turn is a condition the model wrote, which is not in the source. So for each fill that
writes one, a second candidate with it negated:

- a hole inside a line (`and`, `or`): the clause added;
- any other hole: the condition of an `if`, `elif` or `while` header that the fill's first line is (a
  guard put in a slot, a header rewritten), when it is all on that line.

`negated` turns a condition round the way a person would write it: `not x` loses its `not`, one comparison
takes the other operator (`==`/`!=`, `is`/`is not`, `in`/`not in`), anything else goes behind `not` (in
brackets when it is an `and`/`or`, a conditional expression, a lambda or a `:=`, which `not` would split).
"""

from __future__ import annotations

import ast
import re

from agent_core.analysis import pysyntax
from agent_core.search.infill.holes import Hole
from agent_core.search.linetext import span

_OPPOSITE: dict[type[ast.cmpop], str] = {ast.Eq: "!=", ast.NotEq: "==", ast.Is: "is not", ast.IsNot: "is",
                                         ast.In: "not in", ast.NotIn: "in"}
_LOOSE = (ast.BoolOp, ast.IfExp, ast.Lambda, ast.NamedExpr)
_OPERATOR = re.compile(r"\bnot\s+in\b|\bis\s+not\b|==|!=|\bis\b|\bin\b")  # between a comparison's operands
_HEADER = re.compile(r"^(?P<head>\s*(?:if|elif|while)\s+)(?P<test>.+?)(?P<tail>\s*:\s*(?:#.*)?)$")


def negated(text: str) -> str | None:
    """`text`, a condition on one line, turned round (see the module); None when it is no expression."""
    code = text.strip()
    try:
        node = pysyntax.parse_expression(code).body
    except (SyntaxError, ValueError, RecursionError):
        return None
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
        start, end = span(code, node.operand)
        bracketed = start > 0 and code[start - 1] == "(" and end < len(code) and code[end] == ")"
        return code[start - 1 : end + 1] if bracketed and isinstance(node.operand, _LOOSE) else code[start:end]
    if isinstance(node, ast.Compare) and len(node.ops) == 1 and type(node.ops[0]) in _OPPOSITE:
        left_end, right_start = span(code, node.left)[1], span(code, node.comparators[0])[0]
        between = _OPERATOR.sub(_OPPOSITE[type(node.ops[0])], code[left_end:right_start], count=1)
        return code[:left_end] + between + code[right_start:]
    return f"not ({code})" if isinstance(node, _LOOSE) else f"not {code}"


def turned_round(hole: Hole, lines: list[str]) -> list[str] | None:
    """The fill `lines` of `hole` (samples.py `fit`'s) with the condition the model wrote negated, or None when
    it wrote none (see the module)."""
    if not lines:
        return None
    if hole.inline:
        if hole.kind not in ("and", "or"):
            return None
        text = lines[0]
        clause = text[len(hole.head): len(text) - len(hole.tail)]
        turned = negated(clause)
        return [hole.head + turned + hole.tail] if turned is not None else None
    header = _HEADER.match(lines[0])
    if header is None:
        return None
    turned = negated(header["test"])
    return [header["head"] + turned + header["tail"], *lines[1:]] if turned is not None else None
