"""Python parsing on tree-sitter: the only module that imports `tree_sitter`.

`parse_python` turns bytes into a tree and never fails on bad syntax (the
tree carries ERROR / MISSING nodes and the rest of the file is still there).
`Document` keeps a text and its tree in step: `apply_change` edits the tree
and re-parses incrementally, which is what the language server calls on
`textDocument/didChange`. Positions are zero-based lines and code-point
columns (the LSP layer converts UTF-16); tree-sitter itself works in bytes.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import tree_sitter
import tree_sitter_python

from agent_core.models import Position, Span

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


def syntax_errors(tree: Tree) -> list[tuple[int, int]]:
    """(line, byte column) of every ERROR or MISSING node, zero-based, in document order."""
    found: list[tuple[int, int]] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if not node.has_error and not node.is_missing:
            continue
        if node.is_error or node.is_missing:
            found.append((node.start_point[0], node.start_point[1]))
        stack.extend(reversed(node.children))
    return sorted(found)


def byte_to_char_column(line: bytes, byte_col: int) -> int:
    return len(line[:byte_col].decode("utf-8", errors="replace"))


def char_to_byte_column(line: str, char_col: int) -> int:
    return len(line[:char_col].encode("utf-8"))


@dataclass
class _Offsets:
    """Maps between (line, char) positions and byte offsets of one text."""

    text: str

    def __post_init__(self) -> None:
        self.lines = self.text.split("\n")
        self.starts = [0]
        for line in self.lines[:-1]:
            self.starts.append(self.starts[-1] + len(line.encode("utf-8")) + 1)

    def byte_point(self, pos: Position) -> tuple[int, tuple[int, int]]:
        """Byte offset and (row, byte column) of `pos`; positions past the end are clamped."""
        row = min(pos.line, len(self.lines) - 1)
        col = char_to_byte_column(self.lines[row], pos.character if pos.line == row else len(self.lines[row]))
        return self.starts[row] + col, (row, col)


def _end_point(start: tuple[int, int], inserted: bytes) -> tuple[int, int]:
    newlines = inserted.count(b"\n")
    if newlines == 0:
        return start[0], start[1] + len(inserted)
    return start[0] + newlines, len(inserted) - inserted.rfind(b"\n") - 1


class Document:
    """A Python text and its syntax tree, kept in step by incremental re-parses."""

    def __init__(self, text: str) -> None:
        self._parser = new_parser()
        self.text = text
        self.source = text.encode("utf-8")
        self.tree = parse_python(self.source, parser=self._parser)
        self.version = 0

    def apply_change(self, span: Span | None, new_text: str) -> None:
        """Replace `span` (None = the whole text) with `new_text` and re-parse incrementally."""
        if span is None:
            self.text, self.source = new_text, new_text.encode("utf-8")
            self.tree = parse_python(self.source, parser=self._parser)
            self.version += 1
            return
        offsets = _Offsets(self.text)
        start_byte, start_point = offsets.byte_point(span.start)
        old_end_byte, old_end_point = offsets.byte_point(span.end)
        if old_end_byte < start_byte:
            raise ValueError("change range ends before it starts")
        inserted = new_text.encode("utf-8")
        self.source = self.source[:start_byte] + inserted + self.source[old_end_byte:]
        self.text = self.source.decode("utf-8")
        self.tree.edit(
            start_byte=start_byte,
            old_end_byte=old_end_byte,
            new_end_byte=start_byte + len(inserted),
            start_point=start_point,
            old_end_point=old_end_point,
            new_end_point=_end_point(start_point, inserted),
        )
        self.tree = parse_python(self.source, old_tree=self.tree, parser=self._parser)
        self.version += 1

    def sexp(self) -> str:
        """The tree as an S-expression (for comparing parses in tests)."""
        return str(self.tree.root_node)
