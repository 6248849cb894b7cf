"""Symbols, imports and existing tests of Python modules, read from tree-sitter trees.

Everything here is tolerant: a file with syntax errors still yields every
definition tree-sitter could recover (definitions inside ERROR nodes are
visited too). Spans are zero-based, end-exclusive, code-point columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.analysis.parser import Node, Tree, byte_to_char_column, node_text, parse_python
from agent_core.models import Position, Span
from agent_core.workspace.ignore import hidden_or_skipped
from agent_core.workspace.testfiles import is_test_file


@dataclass
class Symbol:
    """A function, method or class definition."""

    name: str
    qualname: str
    kind: str  # "function" | "method" | "class"
    is_async: bool
    span: Span  # the whole definition, decorators included
    decorators: list[str]
    docstring: str | None
    signature: str  # header without the body, e.g. "async def f(a, b=1) -> int:"
    source: str  # full text of the definition, decorators included
    parent: str | None = None  # qualname of the enclosing symbol

    @property
    def start_line(self) -> int:
        """1-based first line (the first decorator, if any)."""
        return self.span.start.line + 1

    @property
    def end_line(self) -> int:
        """1-based last line."""
        return self.span.end.line + 1 if self.span.end.character > 0 else self.span.end.line


@dataclass
class ImportInfo:
    """One imported name: `import a.b as c` -> module 'a.b', name None, alias 'c'."""

    module: str
    name: str | None
    alias: str | None
    line: int  # 1-based
    text: str  # the whole statement


@dataclass
class TestRef:
    """An existing test function whose body mentions a symbol."""

    file: str  # workspace-relative POSIX path
    test: str
    line: int  # 1-based


@dataclass
class ModuleInfo:
    """Everything this module extracts from one file."""

    symbols: list[Symbol] = field(default_factory=list)
    imports: list[ImportInfo] = field(default_factory=list)
    has_errors: bool = False


def _position(node_point: tuple[int, int], lines: list[bytes]) -> Position:
    row, col = node_point
    line = lines[row] if row < len(lines) else b""
    return Position(line=row, character=byte_to_char_column(line, col))


def _span(node: Node, lines: list[bytes]) -> Span:
    return Span(start=_position(node.start_point, lines), end=_position(node.end_point, lines))


def _docstring(body: Node | None, source: bytes) -> str | None:
    if body is None or not body.named_children:
        return None
    first = body.named_children[0]
    if first.type != "expression_statement" or not first.named_children:
        return None
    string = first.named_children[0]
    if string.type != "string":
        return None
    parts = [node_text(c, source) for c in string.named_children if c.type == "string_content"]
    return _dedent_doc("".join(parts))


def _dedent_doc(doc: str) -> str:
    lines = doc.expandtabs().split("\n")
    indents = [len(x) - len(x.lstrip()) for x in lines[1:] if x.strip()]
    cut = min(indents) if indents else 0
    return "\n".join([lines[0].strip()] + [x[cut:] for x in lines[1:]]).strip()


def _signature(defn: Node, source: bytes) -> str:
    body = defn.child_by_field_name("body")
    end = body.start_byte if body is not None else defn.end_byte
    header = source[defn.start_byte : end].decode("utf-8", errors="replace").rstrip()
    return re.sub(r"\s*\n\s*", " ", header)


def _definition(node: Node) -> tuple[Node, list[Node]]:
    """(definition node, decorator nodes) for a function/class or decorated definition."""
    if node.type == "decorated_definition":
        decorators = [c for c in node.named_children if c.type == "decorator"]
        return node.child_by_field_name("definition"), decorators
    return node, []


class _Collector:
    def __init__(self, source: bytes) -> None:
        self.source = source
        self.lines = source.split(b"\n")
        self.symbols: list[Symbol] = []

    def visit(self, node: Node, parent: Symbol | None) -> None:
        for child in node.named_children:
            if child.type in ("function_definition", "class_definition", "decorated_definition"):
                defn, decorators = _definition(child)
                if defn is None:
                    continue
                symbol = self._symbol(child, defn, decorators, parent)
                if symbol is None:
                    self.visit(defn, parent)
                    continue
                self.symbols.append(symbol)
                self.visit(defn.child_by_field_name("body") or defn, symbol)
            elif child.type in ("ERROR", "block", "if_statement", "try_statement", "else_clause",
                                "elif_clause", "except_clause", "finally_clause", "with_statement"):
                self.visit(child, parent)

    def _symbol(self, outer: Node, defn: Node, decorators: list[Node], parent: Symbol | None) -> Symbol | None:
        name_node = defn.child_by_field_name("name")
        if name_node is None:
            return None
        name = node_text(name_node, self.source)
        is_class = defn.type == "class_definition"
        kind = "class" if is_class else ("method" if parent is not None and parent.kind == "class" else "function")
        return Symbol(
            name=name,
            qualname=f"{parent.qualname}.{name}" if parent else name,
            kind=kind,
            is_async=not is_class and bool(defn.children) and defn.children[0].type == "async",
            span=_span(outer, self.lines),
            decorators=[node_text(d, self.source).lstrip("@").strip() for d in decorators],
            docstring=_docstring(defn.child_by_field_name("body"), self.source),
            signature=_signature(defn, self.source),
            source=node_text(outer, self.source),
            parent=parent.qualname if parent else None,
        )


def _imports(tree: Tree, source: bytes) -> list[ImportInfo]:
    found: list[ImportInfo] = []
    stack = [tree.root_node]
    while stack:
        node = stack.pop()
        if node.type == "future_import_statement":
            found.extend(_import_names(node, source, module="__future__"))
            continue
        if node.type in ("import_statement", "import_from_statement"):
            found.extend(_import_names(node, source))
            continue
        if node.type in ("function_definition", "class_definition"):
            continue  # only module-level (and conditional/try) imports
        stack.extend(reversed(node.named_children))
    return sorted(found, key=lambda i: i.line)


def _import_names(node: Node, source: bytes, module: str = "") -> list[ImportInfo]:
    text, line = node_text(node, source), node.start_point[0] + 1
    if node.type == "import_from_statement":
        mod_node = node.child_by_field_name("module_name")
        module = node_text(mod_node, source) if mod_node is not None else ""
    out: list[ImportInfo] = []
    for child in node.children_by_field_name("name"):
        alias = None
        if child.type == "aliased_import":
            alias = node_text(child.child_by_field_name("alias"), source)
            child = child.child_by_field_name("name")
        name = node_text(child, source)
        if node.type == "import_statement":  # `import a.b as c`: the module is the name
            out.append(ImportInfo(module=name, name=None, alias=alias, line=line, text=text))
        else:
            out.append(ImportInfo(module=module, name=name, alias=alias, line=line, text=text))
    if node.type != "import_statement" and any(c.type == "wildcard_import" for c in node.children):
        out.append(ImportInfo(module=module, name="*", alias=None, line=line, text=text))
    return out


def analyse(source: bytes | str, tree: Tree | None = None) -> ModuleInfo:
    """Symbols (document order, nested included) and imports of one module."""
    data = source.encode("utf-8") if isinstance(source, str) else source
    tree = tree if tree is not None else parse_python(data)
    collector = _Collector(data)
    collector.visit(tree.root_node, None)
    return ModuleInfo(symbols=collector.symbols, imports=_imports(tree, data), has_errors=tree.root_node.has_error)


def _contains(outer: Span, inner: Span) -> bool:
    def key(p: Position) -> tuple[int, int]:
        return (p.line, p.character)

    return key(outer.start) <= key(inner.start) and key(inner.end) <= key(outer.end)


def enclosing_symbol(symbols: list[Symbol], span: Span) -> Symbol | None:
    """The innermost symbol whose definition contains all of `span` (None at module level)."""
    best: Symbol | None = None
    for symbol in symbols:
        if _contains(symbol.span, span) and (best is None or _contains(best.span, symbol.span)):
            best = symbol
    return best


def find_symbol(symbols: list[Symbol], name: str) -> Symbol | None:
    """A symbol by qualname ('C.m') first, then by plain name (first in document order)."""
    for symbol in symbols:
        if symbol.qualname == name:
            return symbol
    return next((s for s in symbols if s.name == name), None)


def test_files(workspace: Path) -> list[Path]:
    """Test files of the workspace: tests/**, and test_*.py / *_test.py anywhere (hidden, skipped folders left out)."""
    found: set[Path] = set()
    for path in workspace.rglob("*.py"):
        rel = path.relative_to(workspace)
        if any(hidden_or_skipped(part) for part in rel.parts):  # what the shadow copy leaves out too
            continue
        if is_test_file(rel) and path.name != "conftest.py":
            found.add(path)
    return sorted(found)


def existing_tests(workspace: Path, name: str) -> list[TestRef]:
    """Test functions in the workspace's test files whose source mentions `name` as a word."""
    word = re.compile(rf"\b{re.escape(name)}\b")
    refs: list[TestRef] = []
    for path in test_files(workspace):
        try:
            data = path.read_bytes()
        except OSError:
            continue
        if not word.search(data.decode("utf-8", errors="replace")):
            continue
        for symbol in analyse(data).symbols:
            if symbol.kind != "class" and symbol.name.startswith("test") and word.search(symbol.source):
                rel = path.relative_to(workspace).as_posix()
                refs.append(TestRef(file=rel, test=symbol.qualname, line=symbol.start_line))
    return refs
