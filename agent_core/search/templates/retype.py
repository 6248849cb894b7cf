"""A type test that lets the crashing value through, asked with `isinstance` instead.

A helper predicate (`isString(node)`) may say False for a subclass of a builtin the branch means to
exclude, so the branch for other values takes it and crashes on an attribute it lacks. Changing the
helper would change its every other caller; asking the question the branch means, `isinstance(node, T)`,
at that `if` and at the module's other `if` tests that tell the same value apart the same way, does not.

The failure names the evidence: the type of the value that reached code it does not fit, and the
attribute read on it. A candidate is made when the crash line reads that attribute on a variable, and an
`if` around it tests the variable by calling a predicate on it alone (`isString(node)`): the call is
replaced by `isinstance(node, T)`, T the crashing type if it is a builtin, else the builtin it
derives from (`class AtomicString(str)`, found in the module or beside it). The same call in the other
`if` tests of the module goes with it (not one nested in an `if` that asks it already), and the crash's
own `if` alone comes after.
"""

from __future__ import annotations

import ast
import builtins
from collections.abc import Iterable
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Edit
from agent_core.search.linetext import span
from agent_core.workspace.shadow import read_exact

MAX_NEIGHBOURS = 40  # modules beside the crash's looked into for the class's base
_BUILTIN_TYPES = frozenset(name for name, value in vars(builtins).items()
                           if isinstance(value, type) and not issubclass(value, BaseException))



def _base(name: str, trees: Iterable[ast.Module]) -> str | None:
    """`name` if a builtin type, else the builtin type a class of that name in `trees` derives from."""
    if name in _BUILTIN_TYPES:
        return name
    for tree in trees:
        for node in ast.walk(tree):
            if isinstance(node, ast.ClassDef) and node.name == name:
                bases = [b.id for b in node.bases if isinstance(b, ast.Name) and b.id in _BUILTIN_TYPES]
                return bases[0] if bases else None
    return None


def _neighbours(root: Path | None, path: str) -> Iterable[ast.Module]:
    """The parsed modules beside `path` (its package), at most MAX_NEIGHBOURS, lazily."""
    if root is None:
        return
    folder = (root / path).parent
    for index, file in enumerate(sorted(folder.glob("*.py"))):
        if index >= MAX_NEIGHBOURS:
            return
        try:
            yield pysyntax.parse(read_exact(file))
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            continue


def _predicate(test: ast.expr, variable: str) -> ast.Call | None:
    """The call in `test` of a predicate on `variable` alone (`isString(node)`), not a builtin's (`type(x)`)."""
    for node in ast.walk(test):
        if (isinstance(node, ast.Call) and len(node.args) == 1 and not node.keywords
                and isinstance(node.args[0], ast.Name) and node.args[0].id == variable
                and isinstance(node.func, (ast.Name, ast.Attribute))
                and not (isinstance(node.func, ast.Name) and node.func.id in vars(builtins))):  # `type(x)`
            return node
    return None


def _one_line_ifs(tree: ast.Module) -> list[ast.If]:
    return [n for n in ast.walk(tree) if isinstance(n, ast.If) and n.test.lineno == n.test.end_lineno]


def retyped_guards(tree: ast.Module, lines: list[str], statement: ast.stmt, path: str,
                   wrong_types: frozenset[tuple[str, str]], root: Path | None = None) -> list[Edit]:
    """The candidates of the module docstring for the crash `statement` (its first line's reads)."""
    line = statement.lineno
    reads = {(n.value.id, n.attr) for n in ast.walk(statement)
             if isinstance(n, ast.Attribute) and isinstance(n.value, ast.Name) and n.lineno == line}
    ifs = _one_line_ifs(tree)
    out: list[Edit] = []
    for type_name, attribute in sorted(wrong_types):
        for variable in sorted(v for v, a in reads if a == attribute):
            around = [n for n in ifs if n.lineno < line <= (n.end_lineno or n.lineno)
                      and _predicate(n.test, variable) is not None]
            if not around:
                continue
            guard = max(around, key=lambda n: n.lineno)  # the innermost
            call = _predicate(guard.test, variable)
            base = _base(type_name, [tree, *_neighbours(root, path)])
            if call is None or base is None:
                continue
            asked = ast.unparse(call)
            new = f"isinstance({variable}, {base})"
            same = [n for n in ifs if (c := _predicate(n.test, variable)) is not None and ast.unparse(c) == asked]
            outer = [n for n in same if not any(o is not n and o.lineno < n.lineno <= (o.end_lineno or o.lineno)
                                                  for o in same)]
            why = f"'{type_name}' object has no attribute '{attribute}'"
            groups = [outer] if guard in outer and len(outer) > 1 else []
            for sites in [sorted(group, key=lambda n: n.lineno) for group in [*groups, [guard]]]:
                at = ", ".join(str(n.lineno) for n in sites)
                out.append(_rewrite(lines, sites, variable, new,
                                    f"`{asked}` -> `{new}` ({why}) at line{'s' if len(sites) > 1 else ''} {at}"))
    return list(dict.fromkeys(out))


def _rewrite(lines: list[str], sites: list[ast.If], variable: str, new: str, description: str) -> Edit:
    """Lines first..last of the sites with the predicate call on `variable` replaced by `new` in each test."""
    first, last = min(n.lineno for n in sites), max(n.lineno for n in sites)
    region = lines[first - 1 : last]
    for site in sites:
        call = _predicate(site.test, variable)
        assert call is not None  # the sites were chosen for it
        text = region[site.lineno - first]
        start, end = span(text, call)
        region[site.lineno - first] = f"{text[:start]}{new}{text[end:]}"
    return Edit(first, "\n".join(region), last, description)
