"""A statement that computes a value and drops it, given the binding it was written for.

`delay * factor` on a line of its own, or `display_param == 99`, has no effect: the author meant `delay *=
factor` and `display_param = 99`. Compilers warn of it (gcc's -Wunused-value, clang's -Wunused-comparison,
pylint's pointless-statement), and real fixes make exactly that edit ("`display_param == 99` has no effect
and I assume it was meant to assign 99", r_e_c_u_r #136; "Fix the bug of misusing comparison as assignment",
bilibili-api #117; "replace a statement by an assignment", pspsdk #291).

Three more shapes drop what they were written for, and pylint has a check for the first:

- an exception made and not raised (`ValueError(f"port out of range: {value}")` on a line of its own,
  pointless-exception-statement): `raise` it (ogb #119, pygame_cffi #43, angr #1007, pghoard #403);
- a change made to a default that `.get` returns and nobody keeps (`groups.get(key, []).append(value)`):
  the default stored with `.setdefault`, so the change stays;
- a function that returns a value on one path and, on the other, computes its result into a name and falls
  off its end (`result = [v / total for v in values]` as its last statement): `return result` added.

A statement without effect is its own evidence (templates.EVIDENCE_TIER): `effect_edits` turns `a OP b` into
`a OP= b` and `a == b` into `a = b`, where `a` is a name, an attribute or a subscript; `raise_edits` and
`setdefault_edits` make the next two edits. `fall_off_edits` is evidence when a failing message shows None,
and an ordinary template otherwise.
"""

from __future__ import annotations

import ast
import builtins
import re

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, span
from agent_core.search.templates.place import _own_nodes

_TARGETS = (ast.Name, ast.Attribute, ast.Subscript)
_OPERATORS = {ast.Add: "+", ast.Sub: "-", ast.Mult: "*", ast.Div: "/", ast.FloorDiv: "//", ast.Mod: "%",
              ast.Pow: "**", ast.LShift: "<<", ast.RShift: ">>", ast.BitOr: "|", ast.BitAnd: "&", ast.BitXor: "^",
              ast.MatMult: "@"}
_BUILTIN_EXCEPTIONS = frozenset(name for name, value in vars(builtins).items()
                                if isinstance(value, type) and issubclass(value, BaseException))
_EXCEPTION_NAME = re.compile(r"[A-Z]\w*(Error|Exception|Warning)$")
# methods that change a list, dict or set in place (a change to a throwaway default is lost)
_CHANGES = frozenset({"append", "extend", "insert", "add", "update", "setdefault", "remove", "discard"})
_EMPTY_CALLS = frozenset({"list", "dict", "set"})


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


def _name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else node.id if isinstance(node, ast.Name) else ""


def _exception_class(func: ast.expr, tree: ast.Module) -> bool:
    """Whether `func` names an exception class: a builtin one, one named like one (`ParseError`), or a class
    of the module whose bases are (followed through the module's classes)."""
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    names, seen = [_name(func)], set()
    while names:
        name = names.pop()
        if name in _BUILTIN_EXCEPTIONS or _EXCEPTION_NAME.match(name):
            return True
        if name in classes and name not in seen:
            seen.add(name)
            names += [_name(b) for b in classes[name].bases]
    return False


def raise_edits(text: str, statement: ast.stmt, line: int, tree: ast.Module) -> list[Edit]:
    """(new line, description): an exception made on a statement of its own (`ValueError(...)`) raised."""
    value = getattr(statement, "value", None)
    if not (isinstance(statement, ast.Expr) and statement.lineno == line and isinstance(value, ast.Call)
            and _exception_class(value.func, tree)):
        return []
    s, _ = span(text, value)
    return [Edit(line, text[:s] + "raise " + text[s:], line, "the exception made here is raised (it was dropped)")]


def setdefault_edits(text: str, statement: ast.stmt, line: int) -> list[Edit]:
    """(new line, description): `x.get(key, []).append(v)` as a statement made `x.setdefault(key, []).append(v)`:
    the change went to a default nobody keeps."""
    value = getattr(statement, "value", None)
    if not (isinstance(statement, ast.Expr) and isinstance(value, ast.Call) and isinstance(value.func, ast.Attribute)
            and value.func.attr in _CHANGES):
        return []
    got = value.func.value
    if not (isinstance(got, ast.Call) and isinstance(got.func, ast.Attribute) and got.func.attr == "get"
            and len(got.args) == 2 and not got.keywords and on_line(got.func, line)):
        return []
    default = got.args[1]
    fresh = isinstance(default, (ast.List, ast.Dict, ast.Set)) or (
        isinstance(default, ast.Call) and isinstance(default.func, ast.Name) and default.func.id in _EMPTY_CALLS)
    if not fresh:
        return []
    _, e = span(text, got.func)
    new = text[: e - len("get")] + "setdefault" + text[e:]
    return [Edit(line, new, line, f"`.get` -> `.setdefault`: the `.{value.func.attr}` went to a default nobody kept")]


def fall_off_edits(lines: list[str], function: ast.AST | None) -> list[Edit]:
    """(new lines, description): `return name` after the last statement of a function that returns a value
    elsewhere, when that statement binds `name` (and so the function falls off its end with None)."""
    if not isinstance(function, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return []
    last = function.body[-1]
    target = last.targets[0] if isinstance(last, ast.Assign) and len(last.targets) == 1 else getattr(
        last, "target", None) if isinstance(last, (ast.AugAssign, ast.AnnAssign)) else None
    if not isinstance(target, ast.Name):
        return []
    if not any(isinstance(node, ast.Return) and node.value is not None for node in _own_nodes(function)):
        return []
    end = last.end_lineno or last.lineno
    text = lines[last.lineno - 1]
    indent = text[: len(text) - len(text.lstrip())]
    return [Edit(end, f"{lines[end - 1]}\n{indent}return {target.id}", end,
                 f"`return {target.id}` added: the function fell off its end with None")]
