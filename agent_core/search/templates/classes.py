"""What a class owes the code that uses it: `__enter__` its object, `__init__` its base's, a property its
value.

Four classes of bug that linters know and real histories fix over and over:

- an `__enter__` that returns nothing, so `with Timer() as t:` binds None: `return self` added at its end
  (sqltap #17, nodepy #47);
- an `__init__` of a subclass that never calls its base's (pylint's super-init-not-called), so what the
  base sets is missing ("'Circle' object has no attribute 'tags'"): `super().__init__(...)` made its first
  statement, passing on the parameters the base takes by the subclass's own names (mesa #2025,
  bitmex-websocket #25, charm4py #216);
- a method read as a value (`sum(r.area for r in rects)`: "unsupported operand type(s) for +: 'int' and
  'method'", or `<bound method Rect.area of ...>` in an assertion): `@property` put on the method
  (`property_edits`), for a method of the module's classes that the line reads without calling and that
  takes nothing but `self`;
- a property called (`self.balance()`: "'int' object is not callable"): the call's brackets dropped
  (`uncall_edits`).

`enter_edits` is evidence (templates.EVIDENCE_TIER) whenever it applies: a context manager's `__enter__`
without a value is the bug or harmless. `super_init_edits` is evidence when a failing test reads an attribute
the class lacks, and an ordinary template otherwise. The property kinds are evidence when a failing message
shows a method where a value was meant, or a value called.
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit
from agent_core.search.linetext import span
from agent_core.search.templates.moves import opening_statement
from agent_core.search.templates.place import owner, returns_value

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def enter_edits(tree: ast.Module, lines: list[str], function: ast.AST | None) -> list[Edit]:
    """(new lines, description): `return self` (the method's first parameter) after the last statement of an
    `__enter__` of a class that returns nothing."""
    if not (isinstance(function, _FUNCTIONS) and function.name == "__enter__" and function.args.args
            and owner(tree, function) is not None and not returns_value(function)):
        return []
    last = function.body[-1]
    end = last.end_lineno or last.lineno
    first_line = lines[function.body[0].lineno - 1]
    indent = first_line[: len(first_line) - len(first_line.lstrip())]
    me = function.args.args[0].arg
    return [Edit(end, f"{lines[end - 1]}\n{indent}return {me}", end,
                 f"`__enter__` returns `{me}` (it returned None, which `with ... as` binds)")]


def _calls_init(function: ast.AST) -> bool:
    """Whether `function` calls an `__init__` (`super().__init__(...)`, `Base.__init__(self, ...)`)."""
    return any(isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr == "__init__"
               for n in ast.walk(function))


def _base_init(tree: ast.Module, cls: ast.ClassDef) -> ast.FunctionDef | None | bool:
    """The `__init__` the class's first base has (followed through the module's classes); False when the base
    is not a class of the module (a library's: its `__init__` is unknown), None when no class on the way has
    one (`object`'s)."""
    classes = {c.name: c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)}
    seen = {cls.name}
    current = cls
    while current.bases:
        base = current.bases[0]
        if not isinstance(base, ast.Name) or base.id not in classes:
            return False if not (isinstance(base, ast.Name) and base.id == "object") else None
        if base.id in seen:
            return None
        seen.add(base.id)
        current = classes[base.id]
        found = next((f for f in current.body if isinstance(f, ast.FunctionDef) and f.name == "__init__"), None)
        if found is not None:
            return found
    return None


def _passed_on(base: ast.FunctionDef, mine: ast.arguments) -> str | None:
    """The arguments of `super().__init__(...)`: each parameter of `base`'s (after self) by the subclass's own
    parameter of that name; None when a required one has no such parameter."""
    own = {a.arg for a in [*mine.posonlyargs, *mine.args, *mine.kwonlyargs]}
    given: list[str] = []
    positional = [*base.args.posonlyargs, *base.args.args][1:]
    defaults = [None] * (len(positional) - len(base.args.defaults)) + list(base.args.defaults)
    by_keyword = False
    for param, default in zip(positional, defaults, strict=True):
        if param.arg in own:
            given.append(f"{param.arg}={param.arg}" if by_keyword else param.arg)
        elif default is None:
            return None
        else:
            by_keyword = True  # a skipped default: the ones after it go by keyword
    for param, default in zip(base.args.kwonlyargs, base.args.kw_defaults, strict=True):
        if param.arg in own:
            given.append(f"{param.arg}={param.arg}")
        elif default is None:
            return None
    if base.args.vararg and mine.vararg:
        given.append(f"*{mine.vararg.arg}")
    if base.args.kwarg and mine.kwarg:
        given.append(f"**{mine.kwarg.arg}")
    return ", ".join(given)


def super_init_edits(tree: ast.Module, lines: list[str], function: ast.AST | None) -> list[Edit]:
    """(new lines, description): `super().__init__(...)` made the first statement (after a docstring) of an
    `__init__` of a subclass that calls no `__init__`, when its base has one (of the module, or a library's:
    then with no arguments)."""
    cls = owner(tree, function)
    if not (isinstance(function, ast.FunctionDef) and function.name == "__init__" and cls is not None
            and cls.bases and not _calls_init(function)):
        return []
    base = _base_init(tree, cls)
    if base is None:
        return []
    arguments = "" if base is False else _passed_on(base, function.args)  # type: ignore[arg-type]
    if arguments is None:
        return []
    first = opening_statement(function)
    if first is None:
        return []
    text = lines[first.lineno - 1]
    indent = text[: len(text) - len(text.lstrip())]
    return [Edit(first.lineno, f"{indent}super().__init__({arguments})\n{text}", first.lineno,
                 f"`__init__` calls its base's (`super().__init__({arguments})`), which sets what the class lacks")]


def _decorated(function: ast.AST, names: frozenset[str]) -> bool:
    return any(isinstance(d, ast.Name) and d.id in names or isinstance(d, ast.Attribute) and d.attr in names
               for d in getattr(function, "decorator_list", []))


def _methods(tree: ast.Module) -> dict[str, list[ast.FunctionDef]]:
    """The module's classes' plain methods that take nothing but `self`, by name."""
    out: dict[str, list[ast.FunctionDef]] = {}
    for cls in (c for c in ast.walk(tree) if isinstance(c, ast.ClassDef)):
        for f in cls.body:
            if isinstance(f, ast.FunctionDef) and not f.name.startswith("__") and len(f.args.args) == 1 \
                    and not (f.args.vararg or f.args.kwarg or f.args.kwonlyargs or f.args.posonlyargs) \
                    and not _decorated(f, frozenset({"property", "staticmethod", "classmethod", "setter"})):
                out.setdefault(f.name, []).append(f)
    return out


def property_edits(tree: ast.Module, lines: list[str], nodes: list[ast.AST], line: int) -> list[Edit]:
    """(new lines, description): `@property` put on a method of the module's classes (_methods) that `line`
    reads as an attribute without calling it."""
    methods = _methods(tree)
    called = {id(n.func) for n in nodes if isinstance(n, ast.Call)}
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Attribute) and isinstance(node.ctx, ast.Load) and id(node) not in called
                and node.attr in methods and getattr(node, "lineno", None) == line):
            continue
        for method in methods[node.attr]:
            first = min([method.lineno, *(d.lineno for d in method.decorator_list)])
            text = lines[first - 1]
            indent = text[: len(text) - len(text.lstrip())]
            out.append(Edit(first, f"{indent}@property\n{text}", first,
                            f"`{method.name}` made a property: it is read as a value"))
    return out


def uncall_edits(tree: ast.Module, text: str, nodes: list[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `x.name()` on `line`, where `name` is a property of the module's classes, made
    `x.name`."""
    properties = {f.name for f in ast.walk(tree) if isinstance(f, ast.FunctionDef)
                  and _decorated(f, frozenset({"property", "cached_property"}))}
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Call) and not node.args and not node.keywords and isinstance(node.func, ast.Attribute) \
                and node.func.attr in properties and node.lineno == node.end_lineno == line:
            s, e = span(text, node)
            fs, fe = span(text, node.func)
            out.append(Edit(line, text[:s] + text[fs:fe] + text[e:], line,
                            f"`{text[s:e]}` -> `{text[fs:fe]}`: a property is read, not called"))
    return out
