"""A condition swapped for another the function already tests.

A real fix often keeps an `if` and changes what it asks, bringing in a test the same function makes
elsewhere. The single-edit catalogue changes a condition one token at a time; it cannot bring in another
whole condition. The candidates here are the function's own tests: the conditions of its `if`, `while` and
conditional expressions and the operands of its `and`/`or`, each as it is written and negated. A flag of
the module's state (a name or attribute that is only ever assigned a bool) comes before other tests, then
the nearest to the line; and each in the sense the function mostly tests it first.
"""

from __future__ import annotations

import ast

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit
from agent_core.search.linetext import span

MAX_CONDITIONS = 6  # other conditions per `if`: each is tried as written and negated


def _tests(function: ast.AST) -> list[tuple[ast.expr, bool]]:
    """The conditions `function` tests, each with whether it is tested under a `not` (an odd number of them):
    its `if`/`while`/`assert`/conditional-expression tests and the operands of its boolean operators, one
    line each."""
    out: list[tuple[ast.expr, bool]] = []

    def visit(node: ast.AST, negated: bool) -> None:
        out.append((node, negated))  # type: ignore[arg-type]
        if isinstance(node, ast.BoolOp):
            for value in node.values:
                visit(value, negated)
        elif isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            visit(node.operand, not negated)

    for node in ast.walk(function):  # breadth first: a test is reached from its outermost `not`
        if isinstance(node, (ast.If, ast.While, ast.IfExp, ast.Assert)):
            visit(node.test, False)
        elif isinstance(node, ast.BoolOp) or isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.Not):
            visit(node, False)  # one outside an `if` (`ok = a and not b`)
    # `not x` is tried as the negation of x, which is among them: not kept itself
    unique: dict[int, tuple[ast.expr, bool]] = {}
    for expr, negated in out:
        unique.setdefault(id(expr), (expr, negated))
    return [(e, negated) for e, negated in unique.values()
            if e.lineno == e.end_lineno and not (isinstance(e, ast.UnaryOp) and isinstance(e.op, ast.Not))]


_OTHERS = (ast.List, ast.Dict, ast.Set, ast.Tuple, ast.ListComp, ast.DictComp, ast.SetComp, ast.GeneratorExp,
           ast.JoinedStr, ast.BinOp, ast.Lambda)
_MAKERS = frozenset({"list", "dict", "set", "tuple", "str", "int", "float", "bytes", "frozenset"})


def _kind(value: ast.expr, params: set[str]) -> bool | None:
    """True for a bool value (`True`/`False`, a `not`, a comparison, a bool parameter), False for another
    kind's (a container, a number, a string, `list()`), None when it cannot be told (`state[2]`, `other.x`)."""
    if isinstance(value, ast.Constant):
        return isinstance(value.value, bool) if value.value is not None else None
    if isinstance(value, ast.UnaryOp) and isinstance(value.op, ast.Not) or isinstance(value, ast.Compare):
        return True
    if isinstance(value, ast.Name) and value.id in params:
        return True
    if isinstance(value, _OTHERS) or isinstance(value, ast.Call) and isinstance(value.func, ast.Name) and (
            value.func.id in _MAKERS):
        return False
    return None


def _bool_params(function: ast.FunctionDef | ast.AsyncFunctionDef) -> set[str]:
    """The parameters annotated `bool` or defaulting to `True`/`False`."""
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    defaulted = [a.arg for a in positional[len(positional) - len(args.defaults):]]
    defaults = dict(zip(defaulted, args.defaults, strict=True))
    defaults.update({a.arg: d for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None})
    bools = {name for name, d in defaults.items() if isinstance(d, ast.Constant) and isinstance(d.value, bool)}
    return bools | {a.arg for a in [*positional, *args.kwonlyargs]
                    if isinstance(a.annotation, ast.Name) and a.annotation.id == "bool"}


def _target_name(target: ast.expr) -> str | None:
    if isinstance(target, ast.Name):
        return target.id
    return target.attr if isinstance(target, ast.Attribute) else None


def flags(tree: ast.Module) -> set[str]:
    """The names and attribute names `tree` assigns a bool to and never a value of another kind (`_kind`): a
    `self._parsed = state[2]` in `__setstate__` does not make `_parsed` any less a flag."""
    kinds: dict[str, set[bool | None]] = {}

    def visit(node: ast.AST, params: set[str]) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef)):
                visit(child, _bool_params(child))  # each assignment judged with its own function's parameters
                continue
            pairs: list[tuple[ast.expr, ast.expr | None]] = []
            if isinstance(child, ast.Assign):
                pairs = [(t, child.value) for t in child.targets]
            elif isinstance(child, (ast.AnnAssign, ast.AugAssign)):
                pairs = [(child.target, child.value if isinstance(child, ast.AnnAssign) else None)]
            for target, value in pairs:
                name = _target_name(target)
                if name is not None:
                    kinds.setdefault(name, set()).add(False if value is None else _kind(value, params))
            visit(child, params)

    visit(tree, set())
    return {name for name, found in kinds.items() if True in found and False not in found}


def _is_flag(test: ast.expr, known: set[str]) -> bool:
    return isinstance(test, (ast.Name, ast.Attribute)) and _target_name(test) in known


def _comprehended(function: ast.AST) -> set[str]:
    """Names bound only inside a comprehension or a lambda: a condition using one means nothing elsewhere."""
    names: set[str] = set()
    for node in ast.walk(function):
        if isinstance(node, ast.comprehension):
            names |= {n.id for n in ast.walk(node.target) if isinstance(n, ast.Name)}
        elif isinstance(node, ast.Lambda):
            names |= {a.arg for a in node.args.args}
    return names


def condition_swaps(lines: list[str], statement: ast.stmt, function: ast.AST,
                    tree: ast.Module | None = None) -> list[Edit]:
    """(new line, description): the one-line test of the `if`/`elif`/`while` `statement` replaced by another
    condition of `function`, as written and negated, at most MAX_CONDITIONS of them: single tests before
    combinations (a whole `and`/`or`), the flags of `tree` (its module) before other tests, then the nearest
    first; each in the sense the function mostly tests it in first (negated when most of its uses are)."""
    if not isinstance(statement, (ast.If, ast.While)) or statement.test.lineno != statement.test.end_lineno:
        return []
    line = statement.test.lineno
    text = lines[line - 1]
    start, end = span(text, statement.test)
    own = text[start:end]
    local = _comprehended(function)
    known = flags(tree) if tree is not None else set()
    nearest: dict[str, tuple[bool, bool, int]] = {}  # each condition once, at its occurrence nearest the line
    sense: dict[str, int] = {}  # uses under a `not` minus the others
    for test, negated in _tests(function):
        if test is statement.test or any(isinstance(n, ast.Name) and n.id in local for n in ast.walk(test)):
            continue
        a, b = span(lines[test.lineno - 1], test)
        condition = lines[test.lineno - 1][a:b]
        if condition in own:  # the test itself or a part of it: the catalogue's edits
            continue
        rank = (isinstance(test, ast.BoolOp), not _is_flag(test, known), abs(test.lineno - line))
        nearest[condition] = min(rank, nearest.get(condition, rank))
        sense[condition] = sense.get(condition, 0) + (1 if negated else -1)
    # one test before a combination of them, a flag before other tests, then the nearest
    found = sorted(nearest, key=lambda condition: nearest[condition])
    out: list[Edit] = []
    for condition in found[:MAX_CONDITIONS]:
        wrapped = condition if _atomic(condition) else f"({condition})"
        senses = (condition, f"not {wrapped}")
        for new in (senses[::-1] if sense[condition] > 0 else senses):
            if new != own:
                changed = f"{text[:start]}{new}{text[end:]}"
                out.append(Edit(statement.lineno, changed, statement.lineno,
                                f"`{own}` -> `{new}`, a test the function makes"))
    return out


def _atomic(condition: str) -> bool:
    """Whether `not` can go before `condition` without brackets: a name, attribute, call or subscript."""
    try:
        node = pysyntax.parse_expression(condition).body
    except SyntaxError:
        return False
    return isinstance(node, (ast.Name, ast.Attribute, ast.Call, ast.Subscript, ast.Constant))
