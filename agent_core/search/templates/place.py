"""Where a template goes: the statement starting on a suspicious line, with its function, block, loop and
indentation, and what a guard or handler around it may test and return.

`Place` finds the statement; `guarded_objects` lists what it dereferences or passes on (the objects a guard
tests), `defaults` what its function returns when it gives up early (the exits a guard or handler takes).
"""

from __future__ import annotations

import ast

from agent_core.search.linetext import span

INDENT = "    "
MAX_GUARDED = 3  # objects of one statement a guard may test
MAX_DEFAULTS = 2  # values a guard or handler may return
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
_SIMPLE = (ast.Expr, ast.Assign, ast.AugAssign, ast.AnnAssign, ast.Return, ast.Delete)


class Place:
    """A statement that starts on a line, with what a template needs around it: its function, whether a loop
    holds it (in that function), its body and position there, its indentation and lines."""

    def __init__(self, tree: ast.Module, lines: list[str], line: int,
                 none_attributes: frozenset[str] = frozenset()) -> None:
        self.lines = lines
        self.none_attributes = none_attributes  # attributes the failing tests read on None (cases.FailingInputs)
        self.tree = tree
        self.statement: ast.stmt | None = None
        self.function: ast.AST | None = None
        self.in_loop = False
        self.body: list[ast.stmt] = []
        self.functions: list[ast.AST] = []  # the functions holding the statement, outermost first
        self._find(tree, line)

    def scope(self) -> set[str]:
        """The parameters and assigned names of the functions holding the statement (not a comprehension's
        variables, which exist only inside it)."""
        names: set[str] = set()
        for function in self.functions:
            names |= {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}  # type: ignore[attr-defined]
            comprehended = {id(n) for c in ast.walk(function) if isinstance(c, ast.comprehension)
                            for n in ast.walk(c.target)}
            names |= {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)
                      and id(n) not in comprehended}
        return names

    def _find(self, node: ast.AST, line: int, function: ast.AST | None = None, in_loop: bool = False) -> None:
        for name in ("body", "orelse", "finalbody", "handlers"):
            block = getattr(node, name, None)
            if not isinstance(block, list):
                continue
            loop_body = isinstance(node, _LOOPS) and name == "body"
            for child in block:
                if not (child.lineno <= line <= (child.end_lineno or child.lineno)):
                    continue
                if isinstance(child, ast.stmt) and child.lineno == line:
                    self.statement, self.function, self.body = child, function, block
                    self.in_loop = in_loop or loop_body
                    return
                inner = child if isinstance(child, _FUNCTIONS) else function
                if isinstance(child, _FUNCTIONS):
                    self.functions.append(child)
                self._find(child, line, inner, (in_loop or loop_body) and not isinstance(child, _FUNCTIONS))

    @property
    def indent(self) -> str:
        text = self.lines[self.statement.lineno - 1] if self.statement else ""
        return text[: len(text) - len(text.lstrip())]

    def text_of(self, statements: list[ast.stmt]) -> list[str] | None:
        """The source lines of `statements` (consecutive), or None when a string literal spans lines there
        (indenting those lines would change the string)."""
        first, last = statements[0].lineno, statements[-1].end_lineno or statements[-1].lineno
        for stmt in statements:
            for node in ast.walk(stmt):
                if isinstance(node, ast.Constant) and isinstance(node.value, (str, bytes)) and (
                        node.end_lineno or node.lineno) > node.lineno:
                    return None
        if first != self.statement.lineno or self.lines[first - 1][: len(self.indent)] != self.indent:  # type: ignore[union-attr]
            return None
        return self.lines[first - 1 : last]


def usable(place: Place) -> bool:
    """A statement a template may touch: inside a function, not an `elif` (which cannot be preceded)."""
    stmt = place.statement
    if stmt is None or place.function is None or isinstance(stmt, (*_FUNCTIONS, ast.ClassDef)):
        return False
    return not place.lines[stmt.lineno - 1].lstrip().startswith(("elif", "else", "except", "finally", "@"))


def _header(stmt: ast.stmt) -> list[ast.AST]:
    """The parts of a statement evaluated on its own line (a compound statement's header, not its body)."""
    if isinstance(stmt, (ast.If, ast.While)):
        return [stmt.test]
    if isinstance(stmt, (ast.For, ast.AsyncFor)):
        return [stmt.iter]
    if isinstance(stmt, (ast.With, ast.AsyncWith)):
        return [item.context_expr for item in stmt.items]
    return [stmt]


def _dotted(node: ast.AST) -> bool:
    return isinstance(node, ast.Name) or isinstance(node, ast.Attribute) and _dotted(node.value)


def guarded_objects(place: Place) -> list[str]:
    """What the statement dereferences or passes on: `x` of `x.attr`, `x[i]`, `f(x)`, `for _ in x` (names and
    dotted names rooted at a parameter or local of the enclosing functions: not modules, builtins, `self`)."""
    stmt, lines = place.statement, place.lines
    assert stmt is not None
    found: list[str] = []
    for part in _header(stmt):
        for node in ast.walk(part):
            bases: list[ast.AST] = []
            if isinstance(node, (ast.Attribute, ast.Subscript)):
                bases.append(node.value)
            if isinstance(node, ast.Call):
                bases += [a for a in node.args if not isinstance(a, ast.Starred)]
            bases += [stmt.iter] if isinstance(stmt, (ast.For, ast.AsyncFor)) and node is stmt.iter else []
            bases += [node.iter] if isinstance(node, ast.comprehension) else []
            for base in bases:
                if _dotted(base) and base.lineno == base.end_lineno:  # type: ignore[attr-defined]
                    found.append(_source(lines, base))
    scope = place.scope()
    # first the objects whose attribute the failing tests read on None ("'NoneType' object has no attribute")
    on_none = {_source(lines, n.value) for part in _header(stmt) for n in ast.walk(part)
               if isinstance(n, ast.Attribute) and n.attr in place.none_attributes and _dotted(n.value)
               and n.value.lineno == n.value.end_lineno}
    found = sorted(dict.fromkeys(found), key=lambda f: f not in on_none)
    return [f for f in found if f.split(".")[0] in scope and f not in ("self", "cls")][:MAX_GUARDED]


def _source(lines: list[str], node: ast.AST) -> str:
    text = lines[node.lineno - 1]  # type: ignore[attr-defined]
    s, e = span(text, node)
    return text[s:e]


def defaults(function: ast.AST, lines: list[str]) -> list[str]:
    """What a guard or handler returns: the function's own empty-ish return values (`[]`, `0`, `""`, None), its
    bare `return` when it returns nothing, else None."""
    values: list[str] = []
    bare = True
    for node in _own_nodes(function):
        if isinstance(node, ast.Return) and node.value is not None:
            bare = False
            value = node.value
            empty = isinstance(value, ast.Constant) and not value.value or isinstance(
                value, (ast.List, ast.Tuple, ast.Set)) and not value.elts or isinstance(
                value, ast.Dict) and not value.keys
            if empty and value.lineno == value.end_lineno:
                values.append(_source(lines, value))
    if bare:
        return ["return"]
    return [f"return {v}" for v in dict.fromkeys([*values, "None"])][:MAX_DEFAULTS]


def owner(tree: ast.Module, function: ast.AST | None) -> ast.ClassDef | None:
    """The class whose body defines `function` directly (a method's), or None."""
    return next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and function in c.body), None)


def _own_nodes(function: ast.AST) -> list[ast.AST]:
    """The nodes of `function`, not of the functions and classes defined inside it."""
    out: list[ast.AST] = []
    stack = list(ast.iter_child_nodes(function))
    while stack:
        node = stack.pop()
        out.append(node)
        if not isinstance(node, (*_FUNCTIONS, ast.ClassDef, ast.Lambda)):
            stack.extend(ast.iter_child_nodes(node))
    return out


def returns_value(function: ast.AST) -> bool:
    """Whether `function` (not a function or class inside it) returns a value or yields."""
    return any(isinstance(n, ast.Return) and n.value is not None or isinstance(n, (ast.Yield, ast.YieldFrom))
               for n in _own_nodes(function))


def _exits(place: Place) -> list[str]:
    return ["continue"] if place.in_loop else defaults(place.function, place.lines)  # type: ignore[arg-type]
