"""Inputs for telling two versions of a function apart: the tests' own arguments, and simple variations of them.

The project's tests say which arguments the function is called with: a call
`f(1, 'a')` (or `mod.f(...)`) in a test file whose arguments are literals, or
names a `pytest.mark.parametrize` of the test binds to literal rows. Around
each such call, one argument at a time is varied the way a reviewer probes a
boundary: an int by +1, -1, to 0 and negated; a string emptied, with one
character changed, quoted; a list or tuple emptied, cut to its first element,
reversed, or one of its first three items varied so (a list of words sorted by
length and by text agree on `["ccc", "a", "bb"]`, not on `["'ccc'", "a",
"bb"]`); a bool flipped; any argument None. A call is kept as the source text
of its literal arguments (the sandboxed script evaluates them with
`ast.literal_eval`: nothing of the tests runs), the tests' own calls first.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from agent_core.analysis import pysyntax
from agent_core.workspace.shadow import read_exact

Call = tuple[tuple[str, ...], tuple[tuple[str, str], ...]]  # (argument sources, (keyword, source) pairs)
MAX_INPUTS = 300  # generated calls compared at most
MAX_ROWS = 50  # parametrize rows read per test
ITEMS_VARIED = 3  # the first items of a list or tuple argument, each varied in turn
_NOTHING = object()


def shown(name: str, call: Call) -> str:
    """The call as a reader would type it: `f(1, 'a', key=None)`."""
    args, kwargs = call
    return f"{name}({', '.join([*args, *(f'{k}={v}' for k, v in kwargs)])})"


def _literal(node: ast.expr, bound: dict[str, Any]) -> Any:
    if isinstance(node, ast.Name) and node.id in bound:
        return bound[node.id]
    try:
        return ast.literal_eval(node)
    except (ValueError, TypeError, SyntaxError, MemoryError, RecursionError):
        return _NOTHING


def _is_call_of(node: ast.AST, name: str) -> bool:
    if not isinstance(node, ast.Call):
        return False
    func = node.func
    return (isinstance(func, ast.Name) and func.id == name) or (isinstance(func, ast.Attribute) and func.attr == name)


def _as_call(node: ast.Call, bound: dict[str, Any]) -> Call | None:
    """The call's arguments as literal sources, or None when one of them is not a literal (or `*args`)."""
    if any(isinstance(a, ast.Starred) for a in node.args) or any(k.arg is None for k in node.keywords):
        return None
    args = [_literal(a, bound) for a in node.args]
    kwargs = [(k.arg or "", _literal(k.value, bound)) for k in node.keywords]
    if any(v is _NOTHING for v in args) or any(v is _NOTHING for _, v in kwargs):
        return None
    return tuple(repr(v) for v in args), tuple((k, repr(v)) for k, v in kwargs)


def _parametrize_rows(test: ast.AST) -> list[dict[str, Any]]:
    """The literal rows a test's `parametrize` decorators bind, as {name: value} (one empty row when none)."""
    rows: list[dict[str, Any]] = [{}]
    for decorator in getattr(test, "decorator_list", []):
        if not (isinstance(decorator, ast.Call) and isinstance(decorator.func, ast.Attribute)
                and decorator.func.attr == "parametrize" and len(decorator.args) >= 2):
            continue
        names, values = _literal(decorator.args[0], {}), _literal(decorator.args[1], {})
        if isinstance(names, str):
            names = [n.strip() for n in names.split(",") if n.strip()]
        if not isinstance(names, (list, tuple)) or not isinstance(values, (list, tuple)):
            continue
        table = [dict(zip(names, row if len(names) > 1 else (row,), strict=False)) for row in values[:MAX_ROWS]]
        rows = [{**row, **more} for row in rows for more in table][:MAX_ROWS]
    return rows


def calls_in(source: str, name: str) -> list[Call]:
    """The literal calls of `name` in a test module's `source`, per parametrize row of the test holding them."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: list[Call] = []
    for test in ast.walk(tree):
        if not isinstance(test, (ast.FunctionDef, ast.AsyncFunctionDef)):
            continue
        rows = _parametrize_rows(test)
        for node in ast.walk(test):
            if _is_call_of(node, name):
                assert isinstance(node, ast.Call)
                out += [c for row in rows if (c := _as_call(node, row)) is not None]
    return out


def test_calls(root: Path, test_files: Iterable[str], name: str) -> list[Call]:
    """The literal calls of `name` in the project's test files (the ones that mention it), each once."""
    out: list[Call] = []
    for rel in sorted(test_files):
        if not rel.endswith(".py"):
            continue
        try:
            source = read_exact(root / rel)
        except (OSError, UnicodeDecodeError):
            continue
        if name in source:
            out += calls_in(source, name)
    return list(dict.fromkeys(out))


def _variants(value: Any) -> Iterator[Any]:
    """Simple variations of one literal argument (None last)."""
    if isinstance(value, bool):
        yield not value
    elif isinstance(value, int):
        yield from dict.fromkeys((value + 1, value - 1, 0, -value if value else -1))
    elif isinstance(value, float):
        yield from (0.0, -value)
    elif isinstance(value, str):
        yield ""
        if value:
            yield chr(ord(value[0]) + 1) + value[1:] if value[0] != "\U0010ffff" else "a" + value[1:]
        yield f"'{value}'"
        yield f'"{value}"'
    elif isinstance(value, (list, tuple)):
        yield from (type(value)(), type(value)(value[:1]), type(value)(reversed(value)))
        for index, item in enumerate(value[:ITEMS_VARIED]):  # one item varied the same way (not to None)
            for other in _variants(item):
                if other is not None:
                    yield type(value)([*value[:index], other, *value[index + 1 :]])
    yield None


def variations(call: Call) -> Iterator[Call]:
    """`call` with one argument (positional or keyword) varied at a time (into something else)."""
    args, kwargs = call
    for index, source in enumerate(args):
        for value in _variants(pysyntax.literal_eval(source)):
            if repr(value) != source:
                yield (*args[:index], repr(value), *args[index + 1:]), kwargs
    for index, (key, source) in enumerate(kwargs):
        for value in _variants(pysyntax.literal_eval(source)):
            if repr(value) != source:
                yield args, (*kwargs[:index], (key, repr(value)), *kwargs[index + 1:])


def generated_inputs(calls: list[Call], limit: int = MAX_INPUTS) -> list[Call]:
    """The tests' calls, then their variations, each once, at most `limit`."""
    out = dict.fromkeys(calls)
    for call in calls:
        for varied in variations(call):
            out.setdefault(varied)
            if len(out) >= limit:
                return list(out)[:limit]
    return list(out)[:limit]
