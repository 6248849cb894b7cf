"""What a line misses, when the failing tests' exceptions say so: a `.get` for a key that may be absent, an
`await`, a `self.`, a `global`.

Five kinds of one-token-short fix that real projects make and the catalogue (catalogue/) cannot reach, each
tried as evidence (templates.EVIDENCE_TIER) only when a failing test shows its exception:

- `KeyError`: a lookup that may miss made a `.get` (`config[key]` -> `config.get(key)`; the author's form
  when the missing key means "not set"), and a removal that may miss given its default (`cache.pop(key)`,
  `del cache[key]` -> `cache.pop(key, None)`);
- a coroutine object where a value was expected (`assert <coroutine object ...> == 3`, "coroutine ... was
  never awaited"): a call of an `async def` of the module inside an `async def`, awaited;
- `NameError: name 'x' is not defined` in a method whose class sets or defines `x` on `self`: `x` ->
  `self.x`;
- `UnboundLocalError` for a name the module binds at its top level, in a function that assigns it (`_calls
  += 1`: the assignment makes it local): `global _calls` made the function's first statement
  (PokemonGo-Map #1078, uftrace #272, diaphora #85);
- "max() arg is an empty sequence": `max(...)`/`min(...)` of one iterable given a `default=` (0, then None).
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span
from agent_core.search.templates.moves import opening_statement
from agent_core.search.templates.place import owner

_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def get_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): each one-line lookup `x[key]` read on `line` made `x.get(key)`."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Subscript) and isinstance(node.ctx, ast.Load) and on_line(node, line)
                and not isinstance(node.slice, (ast.Slice, ast.Tuple))):
            continue
        s, e = span(text, node)
        vs, ve = span(text, node.value)
        ks, ke = span(text, node.slice)
        new = replace(text, s, e, f"{text[vs:ve]}.get({text[ks:ke]})")
        out.append(Edit(line, new, line, f"`{text[s:e]}` -> `{text[vs:ve]}.get({text[ks:ke]})`: the key may be absent"))
    return out


def pop_edits(text: str, statement: ast.stmt, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `x.pop(key)` on `line`, or a one-line `del x[key]`, made `x.pop(key, None)`."""
    out: list[Edit] = []
    if isinstance(statement, ast.Delete) and statement.lineno == line == statement.end_lineno \
            and len(statement.targets) == 1:
        target = statement.targets[0]
        if isinstance(target, ast.Subscript) and not isinstance(target.slice, (ast.Slice, ast.Tuple)):
            indent = text[: len(text) - len(text.lstrip())]
            vs, ve = span(text, target.value)
            ks, ke = span(text, target.slice)
            new = f"{text[vs:ve]}.pop({text[ks:ke]}, None)"
            out.append(Edit(line, indent + new, line, f"`{text.strip()}` -> `{new}`: the key may be absent"))
    for node in nodes:
        if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.func.attr == "pop" \
                and len(node.args) == 1 and not node.keywords and on_line(node, line) \
                and not isinstance(node.args[0], ast.Starred):
            s, e = span(text, node)
            new = text[s : e - 1] + ", None)"
            out.append(Edit(line, replace(text, s, e, new), line, f"`{text[s:e]}` -> `{new}`: the key may be absent"))
    return out


def empty_edits(text: str, nodes: Sequence[ast.AST], line: int) -> list[Edit]:
    """(new line, description): `max(xs)`/`min(xs)` of one iterable on `line` given `default=0`, then
    `default=None`."""
    out: list[Edit] = []
    for node in nodes:
        if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in {"max", "min"}
                and len(node.args) == 1 and not any(k.arg == "default" for k in node.keywords)
                and on_line(node, line)):
            continue
        s, e = span(text, node)
        argument = node.args[0]
        bare = isinstance(argument, ast.GeneratorExp) and not node.keywords  # `max(x for x in xs)`: the genexp's
        # parentheses are the call's, and it needs its own beside another argument
        head = f"{node.func.id}({text[slice(*span(text, argument))]}" if bare else text[s : e - 1].rstrip()
        for default in ("0", "None"):
            new = f"{head}, default={default})"
            out.append(Edit(line, replace(text, s, e, new), line,
                            f"`{node.func.id}()` of nothing gives `{default}` (`default={default}`)"))
    return out


def global_edits(lines: list[str], function: ast.AST | None, tree: ast.Module, unbound: frozenset[str]) -> list[Edit]:
    """(new lines, description): `global x` as the first statement of the function holding the line, for each
    name a failing test found unbound there that the function assigns and the module binds at its top level."""
    if not isinstance(function, _FUNCTIONS) or not unbound or function not in tree.body:
        return []
    top = {t.id for stmt in tree.body if isinstance(stmt, (ast.Assign, ast.AugAssign, ast.AnnAssign))
           for target in (stmt.targets if isinstance(stmt, ast.Assign) else [stmt.target])
           for t in ast.walk(target) if isinstance(t, ast.Name)}
    declared = {n for stmt in ast.walk(function) if isinstance(stmt, (ast.Global, ast.Nonlocal)) for n in stmt.names}
    assigned = {n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    names = sorted((unbound & top & assigned) - declared)
    first = opening_statement(function)
    if not names or first is None:
        return []
    text = lines[first.lineno - 1]
    indent = text[: len(text) - len(text.lstrip())]
    joined = ", ".join(names)
    return [Edit(first.lineno, f"{indent}global {joined}\n{text}", first.lineno,
                 f"`global {joined}`: the function changes the module's `{names[0]}`, not a local")]


def await_edits(text: str, statement: ast.stmt, line: int, tree: ast.Module,
                function: ast.AST | None) -> list[Edit]:
    """(new line, description): a call on `line`, in an `async def`, of an `async def` the module defines
    (a function or a method, by name), not awaited, awaited (in brackets unless it is the statement's value)."""
    if not isinstance(function, ast.AsyncFunctionDef):
        return []
    coroutines = {n.name for n in ast.walk(tree) if isinstance(n, ast.AsyncFunctionDef)}
    awaited = {id(n.value) for n in ast.walk(statement) if isinstance(n, ast.Await)}
    whole = getattr(statement, "value", None) if isinstance(statement, (ast.Expr, ast.Assign, ast.AnnAssign,
                                                                         ast.Return)) else None
    out: list[Edit] = []
    for node in ast.walk(statement):
        if not (isinstance(node, ast.Call) and on_line(node, line) and id(node) not in awaited):
            continue
        name = node.func.attr if isinstance(node.func, ast.Attribute) else getattr(node.func, "id", None)
        if name in coroutines:
            s, e = span(text, node)
            call = text[s:e]
            awaited_call = f"await {call}" if node is whole else f"(await {call})"
            out.append(Edit(line, replace(text, s, e, awaited_call), line, f"`{call}` awaited"))
    return out


def self_edits(text: str, nodes: Sequence[ast.AST], line: int, undefined: frozenset[str],
               functions: Sequence[ast.AST], tree: ast.Module) -> list[Edit]:
    """(new line, description): a name a failing test found undefined, read on `line` in a method whose class
    sets `self.<name>` or defines `<name>`, made `self.<name>`."""
    method = functions[0] if functions else None
    cls = owner(tree, method)
    if not undefined or cls is None or not isinstance(method, _FUNCTIONS) or not method.args.args:
        return []
    me = method.args.args[0].arg
    known = {n.attr for n in ast.walk(cls) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
             and n.value.id == me} | {n.name for n in cls.body if isinstance(n, (*_FUNCTIONS, ast.ClassDef))}
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in undefined \
                and node.id in known and on_line(node, line):
            s, e = span(text, node)
            out.append(Edit(line, replace(text, s, e, f"{me}.{node.id}"), line, f"`{node.id}` -> `{me}.{node.id}`"))
    return out
