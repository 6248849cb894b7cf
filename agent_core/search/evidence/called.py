"""What the failing tests call: the names a test function calls, read from its source.

A function a failing test calls by name (`parse(...)`, `obj.render(...)`,
`Config(...)` for its `__init__`) is where a unit test's bug most often is,
even when coverage ranks it below code every failing test runs more
specifically (a class built in the test's own body runs the class machinery's
lines only for the failing tests). evidence/spectrum.py `rank` lets such a
function in among the suspects when the spectrum left it out, and marks it;
the model's holes (driver/interleave.py) are asked there first.

`find_test` finds a test function from its node id (`path::Class::name`,
`path::name`, a parametrized `name[...]`); infill/tests_code.py shows its
source to the model.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from agent_core.analysis import pysyntax

CALLER_TESTS = 5  # failing tests read for the names they call
# An operator in a test calls its operand's method: `a + b` runs `__add__` (or `b.__radd__`), `a /= 2` runs
# `__itruediv__` or else `__truediv__`. (Comparisons are left out: every `assert x == y` has one.)
_OPERATORS: dict[type, str] = {
    ast.Add: "add", ast.Sub: "sub", ast.Mult: "mul", ast.MatMult: "matmul", ast.Div: "truediv",
    ast.FloorDiv: "floordiv", ast.Mod: "mod", ast.Pow: "pow", ast.LShift: "lshift", ast.RShift: "rshift",
    ast.BitOr: "or", ast.BitXor: "xor", ast.BitAnd: "and",
}
_BUILTIN_DUNDERS = {"str": "__str__", "repr": "__repr__", "len": "__len__", "bool": "__bool__", "hash": "__hash__",
                    "iter": "__iter__", "int": "__int__", "float": "__float__", "format": "__format__"}


def _operator_names(node: ast.AST) -> list[str]:
    """The methods an operator node runs (none for other nodes)."""
    if isinstance(node, ast.BinOp | ast.AugAssign) and type(node.op) in _OPERATORS:
        name = _OPERATORS[type(node.op)]
        return [f"__{name}__", f"__r{name}__"] + ([f"__i{name}__"] if isinstance(node, ast.AugAssign) else [])
    if isinstance(node, ast.Subscript):
        return ["__getitem__"] if isinstance(node.ctx, ast.Load) else ["__setitem__", "__delitem__"]
    return []


def _find(tree: ast.Module, names: list[str]) -> tuple[ast.ClassDef | None, ast.AST | None]:
    """The class (for a method) and the function node named by `names` (["Class", "test"] or ["test"])."""
    body: list[ast.stmt] = tree.body
    owner: ast.ClassDef | None = None
    for index, name in enumerate(names):
        node = next((n for n in body if isinstance(n, ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef)
                     and n.name == name), None)
        if node is None:
            return None, None
        if index == len(names) - 1:
            return (owner, node) if not isinstance(node, ast.ClassDef) else (None, None)
        if not isinstance(node, ast.ClassDef):
            return None, None
        owner, body = node, node.body
    return None, None


def find_test(root: Path, nodeid: str) -> tuple[str, list[str], ast.ClassDef | None, ast.AST] | None:
    """(the test file's path, its lines, the class of a method, the test function's node) of `nodeid`; None
    when it is not found."""
    path, _, rest = nodeid.partition("::")
    names = [name.split("[", 1)[0] for name in rest.split("::") if name]
    if not path.endswith(".py") or not names:
        return None
    try:
        text = (root / path).read_text(encoding="utf-8")
        tree = pysyntax.parse(text)
    except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
        return None
    owner, node = _find(tree, names)
    return (path, text.split("\n"), owner, node) if node is not None else None


def called_names(root: Path, failing: Iterable[str]) -> set[str]:
    """The names the first CALLER_TESTS failing tests (that can be read) call: `f` of `f(...)`, `method` of
    `x.method(...)`, `C` of `C(...)`, the special methods their operators, subscripts and `str()`, `len()`...
    run."""
    names: set[str] = set()
    read = 0
    for nodeid in dict.fromkeys(failing):
        if read >= CALLER_TESTS:
            break
        found = find_test(root, nodeid)
        if found is None:
            continue
        read += 1
        body = getattr(found[3], "body", [])  # not its decorators: `parametrize(...)` is no call of the test's
        for node in (node for statement in body for node in ast.walk(statement)):
            names.update(_operator_names(node))
            if isinstance(node, ast.Call):
                func = node.func
                name = func.id if isinstance(func, ast.Name) else func.attr if isinstance(func, ast.Attribute) else ""
                if name:
                    names.add(name)
                if name in _BUILTIN_DUNDERS:
                    names.add(_BUILTIN_DUNDERS[name])
    return names
