"""Python parsing on tree-sitter: the only module that imports `tree_sitter`.

`parse_python` turns bytes into a tree and never fails on bad syntax (the
tree carries ERROR / MISSING nodes and the rest of the file is still there).
Positions are zero-based lines and code-point columns (the LSP layer
converts UTF-16); tree-sitter itself works in bytes.
"""

from __future__ import annotations

from typing import Any

import tree_sitter
import tree_sitter_python

_LANGUAGE = tree_sitter.Language(tree_sitter_python.language())

# Node objects are handed to symbols.py untyped so no other module needs tree_sitter.
Node = Any
Tree = Any


def new_parser() -> Any:
    """A fresh parser for Python (parsers are cheap; one per document avoids sharing state)."""
    return tree_sitter.Parser(_LANGUAGE)


def parse_python(source: bytes, old_tree: Tree | None = None, parser: Any | None = None) -> Tree:
    """Parse `source`; with `old_tree` (already edited) the parse is incremental."""
    parser = parser or new_parser()
    if old_tree is None:
        return parser.parse(source)
    return parser.parse(source, old_tree)


def node_text(node: Node, source: bytes) -> str:
    return source[node.start_byte : node.end_byte].decode("utf-8", errors="replace")


def byte_to_char_column(line: bytes, byte_col: int) -> int:
    return len(line[:byte_col].decode("utf-8", errors="replace"))
