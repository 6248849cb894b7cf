"""A refusal the failing test trips, lifted: the combination it refused, handled where the value is set.

A function may refuse a combination of its parameters (`if a and b: raise TypeError(...)`) that a later
version supports: the fix removes the refusal and gives the combination its own value where the value is
set. Neither edit alone passes: without the refusal the old value does not fit; with it the test never gets
that far.

The evidence is the crash: a failing test raised an exception at a `raise` that is alone under an `if` whose
test joins two or more of the function's parameters with `and` (read as `p` or `self.p`). For each pair
(a, b) of them, every assignment of a constant in the function before the refusal, under an `if` that tests
b and none that tests a, is split on a (`if a: <target> = L` / `else:` as before), L an empty collection the
failing tests write (`()`, `[]`, `{}`), in the one candidate with the refusal removed. The refusal removed
alone comes last (the rest of the code may handle the combination already).
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Sequence

from agent_core.search.candidate import Edit

MAX_SPLITS = 4  # assignments split per refused pair


def _tested(test: ast.expr, names: Iterable[str]) -> set[str]:
    """Which of `names` `test` reads, as a name or as an attribute of `self`."""
    wanted = set(names)
    found = {n.id for n in ast.walk(test) if isinstance(n, ast.Name)}
    found |= {n.attr for n in ast.walk(test) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
              and n.value.id == "self"}
    return found & wanted


def _parameters(function: ast.AST) -> list[str]:
    args: ast.arguments = function.args  # type: ignore[attr-defined]
    return [a.arg for a in [*args.posonlyargs, *args.args, *args.kwonlyargs] if a.arg not in ("self", "cls")]


def _refusal(function: ast.AST, statement: ast.stmt) -> tuple[ast.If, list[str]] | None:
    """The `if` holding the raise `statement` alone, and the parameters its `and` joins (two or more)."""
    if not isinstance(statement, ast.Raise) or not isinstance(statement.exc, ast.Call):
        return None
    holder = next((n for n in ast.walk(function) if isinstance(n, ast.If) and n.body == [statement] and not n.orelse),
                  None)
    if holder is None or not (isinstance(holder.test, ast.BoolOp) and isinstance(holder.test.op, ast.And)):
        return None
    parameters = _parameters(function)
    joined = [name for value in holder.test.values for name in sorted(_tested(value, parameters))]
    joined = list(dict.fromkeys(joined))
    return (holder, joined) if len(joined) >= 2 else None


def _settings(function: ast.AST, before: int, asked: str, other: str) -> list[tuple[ast.Assign, ast.If]]:
    """Assignments of a constant (one target) before line `before`, directly under an `if` that tests `asked`
    and inside none that tests `other`."""
    out: list[tuple[ast.Assign, ast.If]] = []

    def visit(node: ast.AST) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)):
                continue
            if isinstance(child, ast.If) and _tested(child.test, [other]):
                continue  # the combination is handled there already
            if isinstance(child, ast.If) and _tested(child.test, [asked]):
                out.extend((statement, child) for statement in child.body
                           if isinstance(statement, ast.Assign) and len(statement.targets) == 1
                           and isinstance(statement.value, ast.Constant) and statement.lineno < before
                           and statement.lineno == statement.end_lineno)
            visit(child)

    visit(function)
    return out


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip())]


def _removed_span(lines: list[str], holder: ast.If) -> tuple[int, int]:
    """The lines the refusal's `if` takes (with the blank line before it, when one separates it), first..last."""
    first, last = holder.lineno, holder.end_lineno or holder.lineno
    return (first - 1 if first >= 2 and not lines[first - 2].strip() else first), last


def refusal_templates(lines: list[str], statement: ast.stmt, function: ast.AST | None,
                      empties: Sequence[str]) -> list[Edit]:
    """The candidates of the module docstring for the crash `statement` of `function`."""
    if function is None or (found := _refusal(function, statement)) is None:
        return []
    holder, joined = found
    first_removed, last = _removed_span(lines, holder)
    condition = ast.unparse(holder.test)
    out: list[Edit] = []
    for asked, other in ((b, a) for a in joined for b in joined if a != b):
        for assign, _ in _settings(function, holder.lineno, asked, other)[:MAX_SPLITS]:
            text = lines[assign.lineno - 1]
            indent, target = _indent(text), ast.unparse(assign.targets[0])
            for empty in empties:
                # lines assign..last become: the split, the lines up to the refusal, and nothing of the refusal
                region = [f"{indent}if {other}:", f"{indent}    {target} = {empty}", f"{indent}else:",
                          f"{indent}    {text.strip()}", *lines[assign.lineno : first_removed - 1]]
                out.append(Edit(assign.lineno, "\n".join(region), last,
                            f"the refusal `if {condition}: raise` lifted, and `{target}` set to {empty} when "
                            f"`{other}` (line {assign.lineno})"))
    out.append(Edit(first_removed, "", last, f"the refusal `if {condition}: raise` lifted"))
    return list(dict.fromkeys(out))

