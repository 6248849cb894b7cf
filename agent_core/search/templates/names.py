"""Names changed on a suspicious line: two names changed together into another pair of the scope, a name
replaced by one of an enclosing function, a separator literal replaced by the `os` attribute that names it.

Each is a fix no single-token mutant reaches: a function that switches to another pair of values (changing
one name alone leaves its twin unused), a nested function reading the wrong variable of its enclosing one,
code that must follow the platform (tested by patching `os`).
"""

from __future__ import annotations

import ast
import builtins
import difflib
from collections.abc import Iterable

from agent_core.search.candidate import Edit
from agent_core.search.linetext import on_line, replace, span

MAX_OUTER_NAMES = 6
_SEPARATORS = {":": "os.pathsep", ";": "os.pathsep", "/": "os.sep", "\\": "os.sep", "\n": "os.linesep"}


def _function_names(function: ast.AST) -> list[str]:
    names = [a.arg for a in ast.walk(function.args) if isinstance(a, ast.arg)]  # type: ignore[attr-defined]
    names += [n.id for n in ast.walk(function) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)]
    return list(dict.fromkeys(names))


def line_names(nodes: list[ast.AST], line: int) -> list[ast.Name]:
    return sorted((n for n in nodes if isinstance(n, ast.Name) and on_line(n, line)), key=lambda n: n.col_offset)


def _renamed(text: str, names: list[ast.Name], mapping: dict[str, str]) -> str:
    for node in sorted(names, key=lambda n: -n.col_offset):  # right to left: earlier columns stay valid
        if node.id in mapping:
            s, e = span(text, node)
            text = replace(text, s, e, mapping[node.id])
    return text


def _twins(a: str, b: str, scope: set[str]) -> Iterable[tuple[str, str]]:
    """(a', b'): the same prefix or suffix added to (or taken from) both names, both in scope."""
    for other in scope:
        if other != a and other.startswith(a):
            yield other, b + other[len(a):]
        if other != a and other.endswith(a):
            yield other, other[: -len(a)] + b
        if a != other and a.startswith(other) and b.endswith(a[len(other):]):
            yield other, b[: len(b) - len(a) + len(other)]
        if a != other and a.endswith(other) and b.startswith(a[: len(a) - len(other)]):
            yield other, b[len(a) - len(other):]


def twin_edits(text: str, names: list[ast.Name], scope: set[str], line: int) -> list[Edit]:
    """Two names of the line changed together into another pair of the scope (`l_bar`/`r_bar` ->
    `l_bar_user`/`r_bar_user`)."""
    distinct = list(dict.fromkeys(n.id for n in names if n.id in scope))
    out: list[Edit] = []
    for i, a in enumerate(distinct):
        for b in distinct[i + 1:]:
            for new_a, new_b in sorted(set(_twins(a, b, scope))):
                if new_b in scope and new_b != b and {new_a, new_b}.isdisjoint({a, b}):
                    out.append(Edit(line, _renamed(text, names, {a: new_a, b: new_b}), line,
                                    f"`{a}`, `{b}` -> `{new_a}`, `{new_b}`"))
    return out


def _module_names(tree: ast.Module) -> set[str]:
    """The names the module binds at its top: imports, functions, classes, assignments."""
    out: set[str] = set()
    for node in tree.body:
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            out |= {(a.asname or a.name).split(".")[0] for a in node.names}
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            out.add(node.name)
        elif isinstance(node, (ast.Assign, ast.AnnAssign, ast.AugAssign)):
            out |= {n.id for n in ast.walk(node) if isinstance(n, ast.Name) and isinstance(n.ctx, ast.Store)}
    return out


def outer_name_edits(text: str, names: list[ast.Name], functions: list[ast.AST], tree: ast.Module,
                     line: int) -> list[Edit]:
    """In a nested function, a name replaced by a parameter or local of an enclosing one that the nested
    function does not have, the most similar first (a name undefined in the nested function first)."""
    if len(functions) < 2:
        return []
    inner = set(_function_names(functions[-1]))
    outer = [n for f in functions[:-1] for n in _function_names(f) if n not in inner]
    module = _module_names(tree)
    loads = [n for n in names if isinstance(n.ctx, ast.Load) and n.id not in dir(builtins) and n.id not in module]
    loads.sort(key=lambda n: n.id in inner)  # a name the nested function does not define first
    out: list[Edit] = []
    for node in loads:
        similar = sorted((o for o in dict.fromkeys(outer) if o != node.id),
                         key=lambda o: -difflib.SequenceMatcher(None, node.id, o).ratio())
        for other in similar[:MAX_OUTER_NAMES]:
            new = _renamed(text, [node], {node.id: other})
            out.append(Edit(line, new, line, f"`{node.id}` -> `{other}` of the enclosing function"))
    return out[:MAX_OUTER_NAMES]


def separator_edits(text: str, tree: ast.Module, nodes: list[ast.AST], line: int) -> list[Edit]:
    """A separator literal replaced by the `os` attribute that names it, when the module imports `os`."""
    imports_os = any(isinstance(n, ast.Import) and any(a.name == "os" and a.asname is None for a in n.names)
                     for n in tree.body)
    if not imports_os:
        return []
    out: list[Edit] = []
    for node in nodes:
        if isinstance(node, ast.Constant) and isinstance(node.value, str) and node.value in _SEPARATORS \
                and on_line(node, line):
            s, e = span(text, node)
            new = replace(text, s, e, _SEPARATORS[node.value])
            out.append(Edit(line, new, line, f"`{text[s:e]}` -> `{_SEPARATORS[node.value]}`"))
    return out
