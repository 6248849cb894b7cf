"""What a line misses, when the failing tests' exceptions say so: a `.get` for a key that may be absent, an
`await`, a `self.`.

Three kinds of one-token-short fix that real projects make and the catalogue (catalogue/) cannot reach, each
tried as evidence (templates.EVIDENCE_TIER) only when a failing test shows its exception:

- `KeyError`: a lookup that may miss made a `.get` (`config[key]` -> `config.get(key)`; the author's form
  when the missing key means "not set");
- a coroutine object where a value was expected (`assert <coroutine object ...> == 3`, "coroutine ... was
  never awaited"): a call of an `async def` of the module inside an `async def`, awaited;
- `NameError: name 'x' is not defined` in a method whose class sets or defines `x` on `self`: `x` ->
  `self.x`.
"""

from __future__ import annotations

import ast
from collections.abc import Sequence

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span

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
    owner = next((c for c in ast.walk(tree) if isinstance(c, ast.ClassDef) and method in c.body), None)
    if not undefined or owner is None or not isinstance(method, _FUNCTIONS) or not method.args.args:
        return []
    me = method.args.args[0].arg
    known = {n.attr for n in ast.walk(owner) if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name)
             and n.value.id == me} | {n.name for n in owner.body if isinstance(n, (*_FUNCTIONS, ast.ClassDef))}
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Name) and isinstance(node.ctx, ast.Load) and node.id in undefined \
                and node.id in known and on_line(node, line):
            s, e = span(text, node)
            out.append(Edit(line, replace(text, s, e, f"{me}.{node.id}"), line, f"`{node.id}` -> `{me}.{node.id}`"))
    return out
