"""An iterator bound to a name and read more than once: the binding made a list; a collection changed while a
`for` walks it: the loop walks a copy.

A generator, `map`, `filter`, `zip` or a genexp can be walked once. Bound to a name and read twice
(`values = _numbers(lines)`, `total = sum(values)`, `count = sum(1 for _ in values)`), the second read finds
it empty and says nothing; `len(values)` or `values[0]` raises a TypeError. The fix authors make is the
binding wrapped in `list(...)`, and the class is common in real projects: "You can't iterate two times over a
generator" (Mailpile #1504), "Fix double-use of a generator" (vdirsyncer #904), "a generator can be traversed
only once, use list instead" (testplan #80), "Dont loop twice over generator object" (yt #1881).

`reread_edits` offers it as evidence (templates.EVIDENCE_TIER) when the suspicious statement binds such a name
or reads it, and the function reads it in a way only a sequence can take: twice, or once by `len`, an index or
a truth test. A name bound more than once in the function, or read by `next()` (walked on purpose), is left
alone.

A list, dict or set changed while a `for` walks it (`for s in sessions: ... sessions.remove(s)`) skips the
item after each one removed, or raises "dictionary changed size during iteration"; pylint checks both
(modified-iterating-list, modified-iterating-dict), and the fix is to walk a copy (`for s in list(sessions):`).
`copy_edits` offers it as evidence when the loop holds the suspicious statement.
"""

from __future__ import annotations

import ast

from agent_core.search.candidate import Edit
from agent_core.search.linetext import col
from agent_core.search.templates.place import _own_nodes

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)
# builtins that return an iterator (walked once) rather than a sequence
_ITERATOR_BUILTINS = frozenset({"map", "filter", "zip", "reversed", "iter", "enumerate"})
# itertools' finite iterators (not `count`/`cycle`/`repeat`, endless; not `groupby`, whose groups a list empties)
_ITERTOOLS = frozenset({"chain", "islice", "starmap", "takewhile", "dropwhile", "accumulate", "compress",
                        "zip_longest", "filterfalse", "product", "permutations", "combinations", "pairwise"})
# methods that return an iterator whatever their receiver: pathlib's, a regex's, os.walk
_ITERATOR_METHODS = frozenset({"iterdir", "rglob", "finditer", "walk", "scandir"})


def _generators(tree: ast.Module) -> set[str]:
    """The names of the module's functions and methods whose own body yields (a call makes a generator)."""
    out: set[str] = set()
    for function in ast.walk(tree):
        if isinstance(function, ast.FunctionDef) and any(
                isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(function)):
            out.add(function.name)
    return out


def _makes_iterator(value: ast.expr, generators: set[str]) -> bool:
    """Whether `value` evaluates to an iterator: a genexp, or a call of a generator function of the module,
    an iterator builtin, an itertools function, or a method that returns one (`path.glob(...)`, not
    `glob.glob(...)`, which makes a list)."""
    if isinstance(value, ast.GeneratorExp):
        return True
    if not isinstance(value, ast.Call):
        return False
    func = value.func
    if isinstance(func, ast.Name):
        return func.id in _ITERATOR_BUILTINS or func.id in generators
    if not isinstance(func, ast.Attribute):
        return False
    receiver = func.value.id if isinstance(func.value, ast.Name) else None
    if receiver == "itertools":
        return func.attr in _ITERTOOLS
    if func.attr == "glob":
        return receiver != "glob"
    return func.attr in _ITERATOR_METHODS or func.attr in generators


def _sequence_only(read: ast.Name, parents: dict[int, ast.AST]) -> bool:
    """Whether this one read of the name needs a sequence: `len(x)`, `x[i]`, `if x`/`not x`/`x and ...`."""
    parent = parents.get(id(read))
    if isinstance(parent, ast.Subscript) and parent.value is read:
        return True
    if isinstance(parent, ast.Call) and isinstance(parent.func, ast.Name) and parent.func.id == "len":
        return True
    if isinstance(parent, ast.UnaryOp) and isinstance(parent.op, ast.Not):
        return True
    return isinstance(parent, ast.BoolOp) or getattr(parent, "test", None) is read


def reread_edits(tree: ast.Module, lines: list[str], function: ast.AST | None, statement: ast.stmt) -> list[Edit]:
    """(first line, new text, last line, description): a name of `function` bound once to an iterator and read
    as only a sequence can be (module docstring), its binding wrapped in `list(...)`, when `statement` (the
    suspicious one) binds or reads it."""
    if not isinstance(function, _FUNCTIONS):
        return []
    own = _own_nodes(function)
    parents = {id(child): node for node in own for child in ast.iter_child_nodes(node)}
    bound: dict[str, list[ast.AST]] = {}
    for node in own:
        if isinstance(node, ast.Name) and isinstance(node.ctx, (ast.Store, ast.Del)):
            bound.setdefault(node.id, []).append(node)
    names = {a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)}
    generators = _generators(tree)
    first, last = statement.lineno, statement.end_lineno or statement.lineno
    out: list[Edit] = []
    for node in own:
        if not (isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name)):
            continue
        name = node.targets[0].id
        if len(bound.get(name, [])) != 1 or name in names or not _makes_iterator(node.value, generators):
            continue
        reads = [n for n in own if isinstance(n, ast.Name) and n.id == name and isinstance(n.ctx, ast.Load)
                 and (n.lineno, n.col_offset) > (node.lineno, node.col_offset)]
        if not reads or any(isinstance(p := parents.get(id(r)), ast.Call) and isinstance(p.func, ast.Name)
                            and p.func.id == "next" for r in reads):
            continue
        if len(reads) < 2 and not _sequence_only(reads[0], parents):
            continue
        if not any(first <= n.lineno <= last for n in [node.targets[0], *reads]):
            continue
        value = node.value
        start, end = value.lineno, value.end_lineno or value.lineno
        text = "\n".join(lines[start - 1 : end])
        head = col(lines[start - 1], value.col_offset)
        tail = len(text) - len(lines[end - 1]) + col(lines[end - 1], value.end_col_offset)  # type: ignore[arg-type]
        inner = text[head:tail]
        if isinstance(value, ast.GeneratorExp) and inner.startswith("(") and inner.endswith(")"):
            made = f"list{inner}"
        else:
            made = f"list({inner})"
        shown = inner if len(inner) <= 40 else inner[:37] + "..."
        out.append(Edit(start, text[:head] + made + text[tail:], end,
                        f"`{name}` made a list: the iterator `{shown}` is read more than once"))
    return out


# methods that take from a list, dict or set, or add to a dict or set (which then raises); not a list's
# `append`: a list grown while it is walked is the worklist idiom, on purpose
_CHANGING = frozenset({"remove", "pop", "clear", "discard", "add", "update", "popitem", "setdefault"})


def _walked(loop: ast.For) -> ast.expr | None:
    """What `for ... in X` or `for ... in X.items()` (`keys`, `values`) walks, when X is a name or attribute."""
    walked = loop.iter
    if (isinstance(walked, ast.Call) and isinstance(walked.func, ast.Attribute) and not walked.args
            and walked.func.attr in ("items", "keys", "values")):
        walked = walked.func.value
    return walked if isinstance(walked, (ast.Name, ast.Attribute)) else None


def copy_edits(lines: list[str], function: ast.AST | None, statement: ast.stmt) -> list[Edit]:
    """(first line, new text, last line, description): a `for` of `function` holding `statement` (or being it)
    whose body changes what it walks (module docstring), made to walk a copy: `for s in list(sessions):`."""
    if not isinstance(function, _FUNCTIONS):
        return []
    out: list[Edit] = []
    for loop in _own_nodes(function):
        if not (isinstance(loop, ast.For) and loop.lineno <= statement.lineno <= (loop.end_lineno or 0)
                and loop.iter.lineno == loop.iter.end_lineno):
            continue
        walked = _walked(loop)
        if walked is None:
            continue
        same = ast.dump(walked)
        changed = any(
            isinstance(n, ast.Call) and isinstance(n.func, ast.Attribute) and n.func.attr in _CHANGING
            and ast.dump(n.func.value) == same
            or isinstance(n, ast.Delete) and any(isinstance(t, ast.Subscript) and ast.dump(t.value) == same
                                                 for t in n.targets)
            for body in loop.body for n in ast.walk(body))
        if not changed:
            continue
        text = lines[loop.iter.lineno - 1]
        head, tail = col(text, loop.iter.col_offset), col(text, loop.iter.end_col_offset)  # type: ignore[arg-type]
        walks = text[head:tail]
        out.append(Edit(loop.iter.lineno, f"{text[:head]}list({walks}){text[tail:]}", loop.iter.lineno,
                        f"the loop walks a copy, `list({walks})`: its body changes what it walks"))
    return out

