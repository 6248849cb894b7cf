"""Putting whole definitions back where they were.

Small models fix code best by writing the corrected function out in full;
that answer is a precise edit once each top-level piece of it is put in the
place of the piece it redefines, at that piece's own indentation:

- a function or class (or a method, by its name) replaces the one
  definition of that name;
- a module-level assignment to one name replaces the one assignment to it;
- an import not already in the file goes after the file's last import;
- a new function or class (a helper the fix needs) goes at the end.

Anything else (a bare statement, an ambiguous name) makes the whole answer
unusable as a splice, and `splice_definition` returns None.
"""

from __future__ import annotations

import ast
import textwrap

from agent_core.analysis import pysyntax

_DEFS = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)


def _indent(line: str) -> str:
    return line[: len(line) - len(line.lstrip())]


def _assigned_name(node: ast.AST) -> str | None:
    if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
        return node.targets[0].id
    if isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name):
        return node.target.id
    return None


def _key(node: ast.AST) -> tuple[str, str] | None:
    """What a piece of the answer redefines: ("def", name) or ("assign", name)."""
    if isinstance(node, _DEFS):
        return ("def", node.name)
    name = _assigned_name(node)
    return ("assign", name) if name else None


def _targets(tree: ast.Module) -> dict[tuple[str, str], list[ast.stmt]]:
    """Definitions (top level and methods) and module-level assignments, by key."""
    found: dict[tuple[str, str], list[ast.stmt]] = {}
    for node in tree.body:
        key = _key(node)
        if key:
            found.setdefault(key, []).append(node)
        if isinstance(node, ast.ClassDef):
            for inner in node.body:
                if isinstance(inner, _DEFS):
                    found.setdefault(("def", inner.name), []).append(inner)
    return found


def _start(node: ast.stmt) -> int:
    """First line (0-based) of a node, decorators included."""
    decorators: list[ast.expr] = getattr(node, "decorator_list", [])
    return min([node.lineno, *(d.lineno for d in decorators)]) - 1


def _replace_lines(text: str, first: int, end: int | None, source: str) -> str:
    lines = text.splitlines(keepends=True)
    indent = _indent(lines[first])
    body = [indent + line if line.strip() else line for line in source.splitlines()]
    return "".join(lines[:first]) + "\n".join(body) + "\n" + "".join(lines[end:])


def _add_import(text: str, tree: ast.Module, source: str) -> str:
    if source.strip() in {line.strip() for line in text.splitlines()}:
        return text
    imports = [n for n in tree.body if isinstance(n, (ast.Import, ast.ImportFrom))]
    docstring = tree.body[0] if tree.body and isinstance(tree.body[0], ast.Expr) and isinstance(
        getattr(tree.body[0], "value", None), ast.Constant) else None
    after = imports[-1].end_lineno if imports else (docstring.end_lineno if docstring else 0)
    lines = text.splitlines(keepends=True)
    return "".join(lines[:after]) + source.strip() + "\n" + "".join(lines[after:])


def _splice_piece(text: str, piece: ast.stmt, source: str) -> str | None:
    try:
        tree = pysyntax.parse(text)
    except SyntaxError:
        return None
    if isinstance(piece, (ast.Import, ast.ImportFrom)):
        return _add_import(text, tree, source)
    key = _key(piece)
    if key is None:
        return None
    found = _targets(tree).get(key, [])
    if len(found) > 1 or (not found and key[0] != "def"):
        return None
    if not found:  # a new helper: at the end of the module (a test the model wrote along is dropped)
        if key[1].startswith("test"):
            return text
        return text.rstrip("\n") + "\n\n\n" + source.strip("\n") + "\n"
    node = found[0]
    return _replace_lines(text, _start(node), node.end_lineno, source)


def splice_definition(text: str, replacement: str) -> str | None:
    """`text` with every piece of `replacement` spliced in (see the module docstring), or None."""
    source = textwrap.dedent(replacement.strip("\n"))
    try:
        new = pysyntax.parse(source)
    except SyntaxError:
        return None
    pieces = [n for n in new.body if not (isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant))]
    if not pieces or not any((key := _key(n)) and key[0] == "def" or _assigned_name(n) for n in pieces):
        return None
    lines = source.splitlines()
    for piece in pieces:
        spliced = _splice_piece(text, piece, "\n".join(lines[_start(piece):piece.end_lineno]))
        if spliced is None:
            return None
        text = spliced
    return text
