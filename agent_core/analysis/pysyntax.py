"""Python's own parser (the `ast` module), safe to call from several threads at once.

CPython 3.11 and 3.12 keep the counter the AST constructor checks its
recursion with in state shared by the whole interpreter, not per thread
(python/cpython gh-106905 and the reports around it). Two threads turning
source into `ast` objects at the same time, or a finalizer run by the
garbage collector in the middle of one that parses too (3.11 parses a source
line to underline it in every traceback it formats), upset it: the parse
fails with `SystemError: AST constructor recursion depth mismatch`, or a
RecursionError on shallow code. agentls parses in the language server's
engine threads and in the background quick fix at once, so every parse of
the engine goes through here: one lock makes agentls' own parses take turns,
and a parse that still collides with somebody else's (a library's thread, a
finalizer) is repeated once. No library does this; it is a workaround for
an interpreter bug, written by hand.
"""

from __future__ import annotations

import ast
import functools
import symtable
import threading
from typing import Any

# Re-entrant: a finalizer on this very thread may parse in the middle of a parse.
_LOCK = threading.RLock()
_MISMATCH = "recursion depth mismatch"


def _parse(source: str, filename: str, mode: str) -> ast.AST:
    with _LOCK:
        try:
            return ast.parse(source, filename, mode)
        except SystemError as exc:
            if _MISMATCH not in str(exc):
                raise
        except RecursionError:
            pass  # a counter another thread moved, or truly deep code: the second parse tells them apart
        return ast.parse(source, filename, mode)


def parse(source: str, filename: str = "<unknown>") -> ast.Module:
    """`ast.parse(source, filename)`: a module's syntax tree (SyntaxError and ValueError as ast raises them)."""
    tree = _parse(source, filename, "exec")
    assert isinstance(tree, ast.Module)
    return tree


def parse_expression(source: str) -> ast.Expression:
    """`ast.parse(source, mode="eval")`: one expression's syntax tree."""
    tree = _parse(source, "<unknown>", "eval")
    assert isinstance(tree, ast.Expression)
    return tree


def literal_eval(source: str) -> Any:
    """`ast.literal_eval` of a text, parsed here."""
    return ast.literal_eval(parse_expression(source.lstrip(" \t")))


def symbol_table(source: str, filename: str = "<unknown>") -> symtable.SymbolTable:
    """`symtable.symtable(source, filename, "exec")`: the module's scopes as the compiler sees them, under the
    same lock as the parses (it parses the text itself)."""
    with _LOCK:
        return symtable.symtable(source, filename, "exec")


@functools.lru_cache(maxsize=8)
def parse_shared(source: str) -> ast.Module:
    """`parse(source)`, the same tree for the same text while it is among the last few parsed: the search's
    catalogue reads one module's tree once per suspicious line. The tree is shared: read it, never change it."""
    return parse(source)


@functools.lru_cache(maxsize=8)
def walked(tree: ast.AST) -> tuple[ast.AST, ...]:
    """Every node of `tree` in `ast.walk`'s order, kept for the last few trees (a shared tree is walked once
    per suspicious line)."""
    return tuple(ast.walk(tree))
