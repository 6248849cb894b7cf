"""Templates that add control flow around a suspicious statement: a guard before it, a `try` or an `if` around it.

Tried after the single edits (search/templates/table.py orders them). Each mirrors a
kind of fix that real projects make and that no one-line edit reaches:

- a guard before the statement: `if x is None: continue` in a loop, `if not x: return []` in a function
  (a list holding None, an empty argument, an optional attribute: the fix adds the check the author forgot);
  x is an object the statement dereferences (`x.attr`, `x[i]`) or passes on (`f(x)`);
- the statement under `try`, catching the exception the failing test sees (IndexError around a `pop()`
  on an empty stack, KeyError around a lookup, ValueError around `int(text)`), then `pass`, `continue`,
  `break`, a default returned, or the assigned name set to None;
- one to three consecutive statements put under an `if` whose condition the function already tests
  (a block that must only run in one case), or a name of the block being set;
- `return <parameter>` after the last statement of a function that returns nothing (a decorator or a
  registering function that forgets to hand back what it was given).

A template's text replaces the statement's lines (`Mutant.end` when it spans several).
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit
from agent_core.search.linetext import span
from agent_core.search.templates.moves import opening_statement
from agent_core.search.templates.place import (
    _FUNCTIONS,
    _LOOPS,
    _SIMPLE,
    INDENT,
    Place,
    _exits,
    _header,
    _own_nodes,
    _source,
    defaults,
    guarded_objects,
    owner,
    returns_value,
    usable,
)

MAX_CONDITIONS = 4  # conditions tried for an `if` around a block
MAX_BLOCK = 3  # statements an `if` may be put around
_POPS = ("pop", "popleft", "popitem")


def _lookup(node: ast.AST) -> bool:  # `x[i]` or `x.pop()`: IndexError, KeyError
    return isinstance(node, ast.Subscript) or isinstance(node, ast.Call) and isinstance(
        node.func, ast.Attribute) and node.func.attr in _POPS


# which operations raise which exceptions: a `try` is only put around a statement that can raise the one seen
# (any other exception: a statement with a call, which may raise anything)
_RAISERS = {
    "IndexError": _lookup, "KeyError": _lookup,
    "AttributeError": lambda node: isinstance(node, ast.Attribute),
    "TypeError": lambda node: isinstance(node, (ast.Call, ast.BinOp, ast.Subscript)),
    "ZeroDivisionError": lambda node: isinstance(node, ast.BinOp) and isinstance(
        node.op, (ast.Div, ast.FloorDiv, ast.Mod)),
    "StopIteration": lambda node: isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
    and node.func.id == "next",
}


def guard_templates(place: Place) -> list[Edit]:
    """`if x is None: <exit>` and `if not x: <exit>` before the statement, for each object it uses."""
    stmt = place.statement
    if not usable(place) or stmt is None:
        return []
    indent, text = place.indent, place.lines[stmt.lineno - 1]
    out: list[Edit] = []
    for obj in guarded_objects(place):
        for test in (f"{obj} is None", f"not {obj}"):
            for exit_ in _exits(place):
                guard = f"{indent}if {test}:\n{indent}{INDENT}{exit_}\n{text}"
                out.append(Edit(stmt.lineno, guard, stmt.lineno, f"guard `if {test}: {exit_}` added"))
    return out


def _path(node: ast.AST) -> bool:
    """A name, or attributes and constant subscripts of one: `x`, `self.x`, `block[0].text`, `row["id"]`."""
    if isinstance(node, ast.Attribute):
        return _path(node.value)
    if isinstance(node, ast.Subscript):
        return (isinstance(node.slice, ast.Constant) and isinstance(node.slice.value, (int, str))
                and _path(node.value))
    return isinstance(node, ast.Name)


MAX_BOUND = 2  # arguments of one statement a bound guard may take


def bound_guard_templates(place: Place) -> list[Edit]:
    """(first line, new text, last line, description): an argument read off an element of something
    (`block[0].text`) that may be None, bound to a local named after its attribute, the local guarded, and
    passed on instead: `text = block[0].text` / `if text is None: continue`, then the statement with `text`
    (an element's text that is None when the element is empty). Only when a failing
    test read an attribute on None (the argument reached a callee that dereferenced it), and only for a name
    the function does not use yet. The same guard on the expression itself follows."""
    stmt = place.statement
    if not place.none_attributes or not usable(place) or stmt is None:
        return []
    scope = place.scope()
    out: list[Edit] = []
    seen: set[str] = set()
    for call in (n for part in _header(stmt) for n in ast.walk(part) if isinstance(n, ast.Call)):
        for arg in call.args:
            if not (isinstance(arg, ast.Attribute) and _path(arg) and arg.lineno == arg.end_lineno
                    and any(isinstance(n, ast.Subscript) for n in ast.walk(arg))):
                continue
            expression, name = _source(place.lines, arg), arg.attr
            if expression in seen or name in scope or len(seen) >= MAX_BOUND:
                continue
            seen.add(expression)
            line = place.lines[arg.lineno - 1]
            start, end = span(line, arg)
            used = [*place.lines[stmt.lineno - 1 : arg.lineno - 1], f"{line[:start]}{name}{line[end:]}"]
            indent = place.indent
            for exit_ in _exits(place):
                guard = f"{indent}{name} = {expression}\n{indent}if {name} is None:\n{indent}{INDENT}{exit_}"
                out.append(Edit(stmt.lineno, "\n".join([guard, *used]), arg.lineno,
                            f"`{expression}` bound to `{name}`, guarded `if {name} is None: {exit_}`"))
                plain = f"{indent}if {expression} is None:\n{indent}{INDENT}{exit_}"
                out.append(Edit(stmt.lineno, "\n".join([plain, place.lines[stmt.lineno - 1]]), stmt.lineno,
                            f"guard `if {expression} is None: {exit_}` added"))
    return sorted(out, key=lambda template: "bound" not in template.description)


def _assigns(node: ast.AST, name: str) -> bool:
    return any(isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Store) for n in ast.walk(node))


MAX_SETTERS = 3  # statements setting one name that a guard may follow, the latest first


def _setters(place: Place, name: str) -> list[tuple[ast.stmt, bool]]:
    """The statements after which `name` holds a value the suspicious statement may use: its assignments before
    the statement in the function, the latest first, each widened to an `if` whose every branch assigns it
    (the value is only known after the whole `if`/`else`); with whether a loop of the function holds it. More
    than one: the last may be on a path the failing test does not take (a value set again on one platform
    only)."""
    function, stmt = place.function, place.statement
    assert function is not None and stmt is not None
    parents: dict[int, tuple[ast.AST, str]] = {}
    for node in [function, *_own_nodes(function)]:
        for field in ("body", "orelse", "finalbody", "handlers", "cases"):
            block = getattr(node, field, None)  # a conditional expression's `body` is one expression
            for child in block if isinstance(block, list) else []:
                if isinstance(child, (ast.stmt, ast.excepthandler, ast.match_case)):
                    parents[id(child)] = (node, field)
    setters = sorted((n for n in _own_nodes(function) if isinstance(n, (ast.Assign, ast.AnnAssign))
                      and n.lineno < stmt.lineno and _assigns(n, name) and id(n) in parents),
                     key=lambda n: -n.lineno)
    out: list[tuple[ast.stmt, bool]] = []
    for setter in setters:
        found: ast.stmt = setter
        while True:
            parent, _ = parents[id(found)]
            if not (isinstance(parent, ast.If) and parent.orelse and all(
                    any(_assigns(s, name) for s in branch) for branch in (parent.body, parent.orelse))):
                break
            found = parent
        in_loop = False
        up: ast.AST = found
        while up is not function and id(up) in parents:
            up, field = parents[id(up)]
            in_loop = in_loop or isinstance(up, _LOOPS) and field == "body"
        if all(found is not seen for seen, _ in out):
            out.append((found, in_loop))
    return out[:MAX_SETTERS]


def set_guard_templates(place: Place) -> list[Edit]:
    """(first line, new text, last line, description): `if x is None: <exit>` right after the statement that
    sets x, for each name the suspicious statement uses that the function sets before it. Where a value may be
    missing, authors check it where it is made rather than where it is used (`if file is None: return` after
    the `if`/`else` that picks a default stream, not before `file.write`)."""
    stmt = place.statement
    if not usable(place) or stmt is None:
        return []
    ranked: list[tuple[tuple[bool, int], Edit]] = []
    for obj in guarded_objects(place):
        for rank, (setter, in_loop) in enumerate(_setters(place, obj) if obj.isidentifier() else []):
            end = setter.end_lineno or setter.lineno
            block = place.body if setter in place.body else []
            if block and block.index(setter) + 1 < len(block) and block[block.index(setter) + 1] is stmt:
                continue  # right before the statement: guard_templates' own candidate
            if place.lines[end - 1].rstrip().endswith("\\"):
                continue
            text = place.lines[setter.lineno - 1]
            indent = text[: len(text) - len(text.lstrip())]
            exits = ["continue"] if in_loop else defaults(place.function, place.lines)  # type: ignore[arg-type]
            for test in (f"{obj} is None", f"not {obj}"):
                for exit_ in exits:
                    new = f"{place.lines[end - 1]}\n{indent}if {test}:\n{indent}{INDENT}{exit_}"
                    description = f"guard `if {test}: {exit_}` added after `{obj}` is set (line {end})"
                    ranked.append(((test.startswith("not "), rank), Edit(end, new, end, description)))
    # `is None` before `not`; each object's latest setter before any object's earlier one
    return [template for _, template in sorted(ranked, key=lambda entry: entry[0])]


def _can_raise(stmt: ast.stmt, exception: str) -> bool:
    raises = _RAISERS.get(exception, lambda node: isinstance(node, ast.Call))
    return any(raises(node) for node in ast.walk(stmt))


def try_templates(place: Place, exceptions: list[str]) -> list[Edit]:
    """The statement under `try`, catching each exception the failing tests saw that it can raise."""
    stmt = place.statement
    if not usable(place) or not isinstance(stmt, _SIMPLE):
        return []
    body = place.text_of([stmt])
    if body is None:
        return []
    indent = place.indent
    handlers = ["pass"] if not isinstance(stmt, ast.Return) else []
    if place.in_loop:
        handlers = ["continue", "break", *handlers]
    handlers += defaults(place.function, place.lines)  # type: ignore[arg-type]
    if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 and isinstance(stmt.targets[0], ast.Name):
        handlers.append(f"{stmt.targets[0].id} = None")
    inner = "\n".join(INDENT + line for line in body)
    out: list[Edit] = []
    for exception in exceptions:
        if not _can_raise(stmt, exception):
            continue
        for handler in dict.fromkeys(handlers):
            new = f"{indent}try:\n{inner}\n{indent}except {exception}:\n{indent}{INDENT}{handler}"
            out.append(Edit(stmt.lineno, new, stmt.end_lineno or stmt.lineno,
                            f"`{exception}` caught around the line: `{handler}`"))
    return out


def conditions(place: Place) -> list[str]:
    """Conditions for an `if` around a block: the ones the function already tests (one line each), then
    whether an object the first statement uses is set."""
    tests = [n.test for n in _own_nodes(place.function) if isinstance(n, (ast.If, ast.While))]  # type: ignore[arg-type]
    tests.sort(key=lambda t: abs(t.lineno - place.statement.lineno))  # type: ignore[union-attr]
    found = [_source(place.lines, t) for t in tests if t.lineno == t.end_lineno]
    found += [f"{obj} is not None" for obj in guarded_objects(place)]
    return list(dict.fromkeys(found))[:MAX_CONDITIONS]


def block_templates(place: Place) -> list[Edit]:
    """One to MAX_BLOCK statements, from the suspicious one on, put under `if <condition>:`."""
    stmt = place.statement
    if not usable(place) or stmt is None or isinstance(stmt, ast.Return):
        return []
    start = next(i for i, s in enumerate(place.body) if s is stmt)
    out: list[Edit] = []
    for size in range(1, MAX_BLOCK + 1):
        block = place.body[start : start + size]
        body = place.text_of(block) if len(block) == size else None
        if body is None:
            break
        inner = "\n".join(INDENT + line if line.strip() else line for line in body)
        for test in conditions(place):
            if any(test in place.lines[s.lineno - 1] for s in block[:1] if isinstance(s, (ast.If, ast.While))):
                continue  # `if c:` around `if c:` changes nothing
            new = f"{place.indent}if {test}:\n{inner}"
            out.append(Edit(stmt.lineno, new, block[-1].end_lineno or block[-1].lineno,
                            f"{size} statement(s) put under `if {test}:`"))
    return out


MAX_RETURNED = 2  # parameters a missing `return` may hand back


def return_templates(place: Place) -> list[Edit]:
    """`return <parameter>` after the last statement of a function that returns nothing: a decorator or a
    registering function that forgets to hand back what it was given (a class decorator that returns None
    replaces the class by None). The lines from the statement to the end of
    the function stay as they are; the return is added after them."""
    function = place.function
    stmt = place.statement
    if not usable(place) or not isinstance(function, _FUNCTIONS) or stmt is None or function.name == "__init__":
        return []
    if returns_value(function):
        return []
    last = function.body[-1]
    end = last.end_lineno or last.lineno
    if isinstance(last, (ast.Return, ast.Raise)) or end < stmt.lineno:
        return []
    first_body = place.lines[function.body[0].lineno - 1]
    indent = first_body[: len(first_body) - len(first_body.lstrip())]
    params = [a.arg for a in [*function.args.posonlyargs, *function.args.args] if a.arg not in ("self", "cls")
              or a.arg == "cls" and not _is_method(function, place)]
    kept = "\n".join(place.lines[stmt.lineno - 1 : end])
    return [Edit(stmt.lineno, f"{kept}\n{indent}return {p}", end, f"`return {p}` added at the end of `{function.name}`")
            for p in params[:MAX_RETURNED]]


def _is_method(function: ast.AST, place: Place) -> bool:
    """Whether `function` is defined directly in a class (its `self`/`cls` is not a value a caller passed)."""
    return owner(place.tree, function) is not None


_MUTABLE_CALLS = ("list", "dict", "set")
# calls whose value is the same whenever they are made: a default of theirs is not a value frozen at `def` time
_CONSTANT_CALLS = frozenset({"tuple", "frozenset", "int", "float", "str", "bytes", "bool", "complex", "range",
                             "object"})


def _mutable(node: ast.AST) -> bool:
    """`[]`, `{}`, `{1}` or `list()`/`dict()`/`set()`: a default made once, shared by every call."""
    return isinstance(node, (ast.List, ast.Dict, ast.Set)) or isinstance(node, ast.Call) and isinstance(
        node.func, ast.Name) and node.func.id in _MUTABLE_CALLS and not node.args and not node.keywords


def _made_once(node: ast.AST) -> bool:
    """Any other call (`time.time()`, `datetime.now()`, `uuid4()`, `Config()`): evaluated once, when the `def`
    runs, so every call that omits the argument gets that first value (flake8-bugbear's B008)."""
    if not isinstance(node, ast.Call) or _mutable(node):
        return False
    return not (isinstance(node.func, ast.Name) and node.func.id in _CONSTANT_CALLS)


def mutable_default_templates(place: Place) -> list[Edit]:
    """(first line, new text, last line, description): a parameter whose default is a mutable literal, given
    None and a fresh value made at the top of the body (`def f(items=[])` -> `def f(items=None):` + `if items
    is None: items = []`). The default is built once and every call shares it: a list that keeps what
    earlier calls appended is the classic bug, and that guard its classic fix (flake8-bugbear's B006). A
    default that is any other call (`stamp=time.time()`) is frozen the same way (B008), and gets the same fix."""
    function = place.functions[-1] if place.functions else None
    if not isinstance(function, _FUNCTIONS) or not function.body:
        return []
    args = function.args
    positional = [*args.posonlyargs, *args.args]
    pairs = [*zip(positional[len(positional) - len(args.defaults):], args.defaults, strict=True),
             *((a, d) for a, d in zip(args.kwonlyargs, args.kw_defaults, strict=True) if d is not None)]
    first = opening_statement(function)
    if first is None:
        return []
    opening = place.lines[first.lineno - 1]
    indent = opening[: len(opening) - len(opening.lstrip())]
    out: list[Edit] = []
    for arg, default in pairs:
        if not (_mutable(default) or _made_once(default)) or default.lineno != default.end_lineno:
            continue
        header = place.lines[function.lineno - 1 : first.lineno - 1]
        at = default.lineno - function.lineno
        text = header[at]
        s, e = span(text, default)
        made = text[s:e]
        header[at] = f"{text[:s]}None{text[e:]}"
        guard = f"{indent}if {arg.arg} is None:\n{indent}{INDENT}{arg.arg} = {made}"
        what = "mutable default" if _mutable(default) else "default evaluated once"
        out.append(Edit(function.lineno, "\n".join([*header, guard]), first.lineno - 1,
                    f"{what} `{arg.arg}={made}` made per call: None, then `{made}` when not given"))
    return out
