"""A parameter's default passed on as if the caller had set it: `None` for "not given", forwarded only when given.

A value handed down to a nested object's setting overrides that object's own setting with a default nobody
chose; the fix makes the default `None` and passes the value on only when it is not `None`. The single
edits cannot make this: each of the changes alone leaves the test failing.

A candidate is made for a statement that assigns a parameter of its function, unchanged, to something else's
setting (an item by a string key or another object's attribute: `kwargs["p"] = p`, `other.p = p`; not
`self.p = p`, which only stores it) when that parameter has a constant default other than `None`. The statement is
made conditional on `p is not None` (an `else:` that holds it alone becomes `elif p is not None:`, any other
statement is put under an `if`), and the default becomes `None`: first in the statement's function alone, then
also in every other function of the module whose parameter of that name has the same default (a value handed
down a chain of calls keeps its "not given" the whole way). An annotation written with `|` (or in a module
that postpones annotations) gains `| None`; another is left as it is, since rewriting it could need an import.
"""

from __future__ import annotations

import ast
import re
from collections.abc import Iterator

from agent_core.search.candidate import Edit
from agent_core.search.linetext import col

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_ELSE = re.compile(r"\s*else\s*:\s*(#.*)?$")


def _defaults(function: ast.AST) -> Iterator[tuple[ast.arg, ast.expr]]:
    """Each parameter of `function` that has a default, with it."""
    args: ast.arguments = function.args  # type: ignore[attr-defined]
    positional = [*args.posonlyargs, *args.args]
    yield from zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True)
    yield from ((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)


def _forwarded(statement: ast.stmt, function: ast.AST) -> tuple[str, ast.Constant] | None:
    """(p, its default) when `statement` assigns parameter p, as it came, to a subscript or an attribute and p
    has a constant default other than None."""
    if not (isinstance(statement, ast.Assign) and len(statement.targets) == 1
            and isinstance(statement.value, ast.Name) and _setting_elsewhere(statement.targets[0])):
        return None
    name = statement.value.id
    for arg, default in _defaults(function):
        if arg.arg == name and isinstance(default, ast.Constant) and default.value is not None:
            return name, default
    return None


def _setting_elsewhere(target: ast.expr) -> bool:
    """Whether `target` is a setting handed to something else: an item of a mapping by a string key
    (`kwargs["p"]`) or an attribute of another object than `self`/`cls` (`self.p = p` only stores it)."""
    if isinstance(target, ast.Subscript):
        return isinstance(target.slice, ast.Constant) and isinstance(target.slice.value, str)
    return isinstance(target, ast.Attribute) and not (isinstance(target.value, ast.Name)
                                                       and target.value.id in ("self", "cls"))


def _same_default(arg: ast.arg, default: ast.expr, name: str, value: ast.Constant) -> bool:
    return (arg.arg == name and isinstance(default, ast.Constant)
            and type(default.value) is type(value.value) and default.value == value.value)


def _postponed(tree: ast.Module) -> bool:
    return any(isinstance(n, ast.ImportFrom) and n.module == "__future__" and any(a.name == "annotations"
                                                                                  for a in n.names)
               for n in tree.body)


def _none_typed(annotation: ast.expr | None, postponed: bool) -> bool:
    """Whether " | None" may follow `annotation`: it has none yet, and `|` between types is already how the
    module writes them (or annotations are never evaluated there)."""
    if annotation is None or annotation.lineno != annotation.end_lineno:
        return False
    if any(isinstance(n, ast.Constant) and n.value is None for n in ast.walk(annotation)):
        return False
    return postponed or any(isinstance(n, ast.BinOp) and isinstance(n.op, ast.BitOr) for n in ast.walk(annotation))


def _edits_of_defaults(functions: list[ast.AST], name: str, value: ast.Constant,
                       postponed: bool) -> list[tuple[int, int, int, str]]:
    """(line, start column, end column, new text) that make `name`'s default None in `functions`."""
    out: list[tuple[int, int, int, str]] = []
    for function in functions:
        for arg, default in _defaults(function):
            if not _same_default(arg, default, name, value) or default.lineno != default.end_lineno:
                continue
            out.append((default.lineno, default.col_offset, default.end_col_offset or 0, "None"))
            if _none_typed(arg.annotation, postponed):
                end = arg.annotation.end_col_offset or 0  # type: ignore[union-attr]
                out.append((arg.annotation.end_lineno or 0, end, end, " | None"))  # type: ignore[union-attr]
    return out


def _apply(lines: list[str], edits: list[tuple[int, int, int, str]]) -> list[str]:
    """`lines` with the column edits made, right to left on each line (ast's byte columns)."""
    out = list(lines)
    for line, start, end, new in sorted(edits, key=lambda e: (e[0], -e[1])):
        text = out[line - 1]
        out[line - 1] = text[: col(text, start)] + new + text[col(text, end):]
    return out


def _else_line(lines: list[str], holder: ast.If, statement: ast.stmt) -> int | None:
    """The line of the `else:` whose block is `statement` alone, between the `if`'s body and it."""
    for line in range(statement.lineno - 1, holder.body[-1].end_lineno or holder.lineno, -1):
        if _ELSE.match(lines[line - 1]):
            return line
    return None


def _conditioned(lines: list[str], function: ast.AST, statement: ast.stmt, name: str) -> list[str] | None:
    """`lines` with `statement` run only when `name is not None`, or None when that cannot be written."""
    out = list(lines)
    holder = next((n for n in ast.walk(function) if isinstance(n, ast.If) and n.orelse == [statement]), None)
    if holder is not None and (at := _else_line(lines, holder, statement)) is not None:
        text = out[at - 1]
        out[at - 1] = text.replace("else", f"elif {name} is not None", 1)
        return out
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    indent = lines[first - 1][: len(lines[first - 1]) - len(lines[first - 1].lstrip())]
    if any(not lines[n - 1].startswith(indent) for n in range(first, last + 1) if lines[n - 1].strip()):
        return None
    body = ["    " + lines[n - 1] if lines[n - 1].strip() else lines[n - 1] for n in range(first, last + 1)]
    out[first - 1 : last] = [f"{indent}if {name} is not None:", *body]
    return out


def sentinel_templates(tree: ast.Module, lines: list[str], statement: ast.stmt,
                       function: ast.AST | None) -> list[Edit]:
    """The candidates of the module docstring for `statement` of `function`."""
    if function is None or (found := _forwarded(statement, function)) is None:
        return []
    name, value = found
    conditioned = _conditioned(lines, function, statement, name)
    if conditioned is None:
        return []
    postponed = _postponed(tree)
    others = [f for f in ast.walk(tree) if isinstance(f, _FUNCTIONS) and f is not function
              and any(_same_default(a, d, name, value) for a, d in _defaults(f))]
    groups = [[function], *([[function, *others]] if others else [])]
    shift = len(conditioned) - len(lines)
    out: list[Edit] = []
    for group in groups:
        edits = _edits_of_defaults(group, name, value, postponed)
        if not edits:
            continue
        new = _apply(conditioned, [e if e[0] < statement.lineno else (e[0] + shift, *e[1:]) for e in edits])
        first = min(statement.lineno, *(e[0] for e in edits))
        last = max(statement.end_lineno or statement.lineno, *(e[0] for e in edits))
        where = "its function" if len(group) == 1 else f"{len(group)} functions of the module"
        description = (f"`{name}` passed on only when given: default {ast.unparse(value)} -> None ({where}), "
                       f"`{ast.unparse(statement).strip()}` only if `{name} is not None`")
        out.append(Edit(first, "\n".join(new[first - 1 : last + shift]), last, description))
    return out
