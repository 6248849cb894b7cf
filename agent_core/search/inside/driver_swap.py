"""Runs inside the sandbox beside driver_script.py: a mutant put into a live function by swapping its code.

Stdlib only. The "hot" mutants mode of the driver imports and collects the
project and its tests once, then forks a child per mutant; the child compiles
the mutated file, finds the code object of the function that holds the line,
and assigns it to the live function's `__code__`. Every reference to that
function (a test module's `from pkg import f`, a decorator's wrapper, a bound
method) then runs the mutant, and a child costs a fork and its tests instead
of a fresh collection of the suite.

`swap` refuses (returns False) whatever a code swap cannot express, and the
driver tries those mutants the slow way (a child that imports the mutated
module before collecting): a line outside a function body (module or class
level, a `def` or decorator line, whose defaults and decorators ran at
import), a function it cannot reach from its module by name, or a code
object whose closure differs from the live function's.
"""

import ast
import os
import sys


def _same_file(a, b):
    try:
        return os.path.samefile(a, b)
    except OSError:
        return False


def _spans(body, end):
    """(node, last line) for the statements of `body`, a block that ends at line `end`. Python 3.7's ast has no
    `end_lineno`: there a statement ends where the next one starts (which, for a decorated def, is its first
    decorator), the last one where its block ends; without this every 3.7 mutant went the slow way, and the
    slow way misses a function its package re-exports before the child imports the mutant."""
    out = []
    for index, node in enumerate(body):
        last = getattr(node, "end_lineno", None)
        if last is None:
            last = body[index + 1].lineno - 1 if index + 1 < len(body) else end
        out.append((node, last))
    return out


def _chain(tree, line, source_lines=10 ** 9):
    """The class and function defs from the module down to the outermost function holding `line`, or None
    when the line is not in a function's body (or the function sits inside another function); with the last
    line of that function."""
    chain, body, end = [], tree.body, source_lines
    while True:
        node, end = next(((n, e) for n, e in _spans(body, end) if n.lineno <= line <= e), (None, end))
        if isinstance(node, ast.ClassDef):
            chain.append(node)
            body = node.body
        elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            return ([*chain, node], end) if node.body and line >= node.body[0].lineno else (None, end)
        else:
            return None, end


def _module(path):
    for module in list(sys.modules.values()):
        if _same_file(getattr(module, "__file__", None) or "", path):
            return module
    return None


def _function(owner, name):
    """The plain function stored under `name` in `owner` (a module or class), through the usual wrappers."""
    found = owner.__dict__.get(name) if hasattr(owner, "__dict__") else None
    for _ in range(10):
        if found is None:
            return None
        if isinstance(found, (staticmethod, classmethod)):
            found = found.__func__
        elif isinstance(found, property):
            found = next((f for f in (found.fget, found.fset, found.fdel)
                          if f is not None and getattr(f, "__name__", "") == name), None)
        elif hasattr(found, "__code__") and found.__code__.co_name == name:
            return found
        else:
            found = getattr(found, "__wrapped__", None)  # functools.wraps and friends
    return None


def _code(code, name, firstlineno):
    """The code object named `name` that starts at `firstlineno`, anywhere under `code`."""
    if code.co_name == name and code.co_firstlineno == firstlineno:
        return code
    for const in code.co_consts:
        if hasattr(const, "co_consts"):
            found = _code(const, name, firstlineno)
            if found is not None:
                return found
    return None


def swap(path, source, line, text, end=0):
    """Put `text` as line `line` (through line `end`, when set) of the module file `path` (whose text is
    `source`) into the live function that holds it; whether it could (anything unexpected, e.g. an older
    Python's ast, is a no)."""
    try:
        return _swap(path, source, line, text, max(line, end))
    except Exception:  # noqa: BLE001 - the slow way still tries the mutant
        return False


def _swap(path, source, line, text, end):
    try:
        chain, last = _chain(ast.parse(source), line, len(source.split("\n")))
    except (SyntaxError, ValueError):
        return False
    if chain and end > last:
        return False  # the replaced lines run past the function
    module = _module(path) if chain else None
    if module is None:
        return False
    owner = module
    for node in chain[:-1]:
        owner = owner.__dict__.get(node.name) if hasattr(owner, "__dict__") else None
    function = _function(owner, chain[-1].name) if owner is not None else None
    if function is None:
        return False
    lines = source.split("\n")
    lines[line - 1 : end] = [text]
    old = function.__code__
    try:
        compiled = compile("\n".join(lines), old.co_filename, "exec", dont_inherit=True)
        new = _code(compiled, old.co_name, old.co_firstlineno)
        if new is None:
            return False
        function.__code__ = new
    except (SyntaxError, ValueError, TypeError):
        return False
    return True
