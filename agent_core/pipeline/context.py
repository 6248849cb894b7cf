"""What the models get to see: the relevant files and the workspace's layout, trimmed."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field

from agent_core.analysis.parser import node_text, parse_python
from agent_core.analysis.symbols import Symbol, analyse
from agent_core.models import TestReport
from agent_core.workspace.ignore import hidden_or_skipped
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.testfiles import is_test_file

FILES_BUDGET = 9000  # characters of file text in one prompt (small local models have small contexts)


def python_files(shadow: ShadowWorkspace, limit: int = 200) -> list[str]:
    """Workspace-relative .py files, sources before tests, sorted."""
    found: list[str] = []
    for dirpath, dirnames, filenames in os.walk(shadow.root):
        dirnames[:] = sorted(d for d in dirnames if not hidden_or_skipped(d))
        found.extend(
            os.path.relpath(os.path.join(dirpath, n), shadow.root) for n in sorted(filenames) if n.endswith(".py")
        )
    return sorted(found, key=lambda p: (is_test_file(p), p))[:limit]


def relevant_files(shadow: ShadowWorkspace, hints: list[str], report: TestReport | None) -> list[str]:
    """Files a step should see: hinted ones, then what the failures point at, then the rest."""
    ordered: list[str] = []
    for f in report.failures if report else []:
        for rel in (f.source_file, f.file):
            if rel:
                ordered.append(rel)
    candidates = hints + ordered + python_files(shadow)
    seen: list[str] = []
    for rel in candidates:
        rel = rel.strip().removeprefix("./")
        if rel and rel not in seen:
            try:
                if shadow.resolve(rel).is_file():
                    seen.append(shadow.relative(rel))
            except ValueError:
                continue
    return sorted(seen, key=is_test_file)  # the code to change first, the tests (the specification) after


def render_files(
    shadow: ShadowWorkspace,
    files: list[str],
    budget: int = FILES_BUDGET,
    tests_read_only: bool = False,
    focus: dict[str, set[str]] | None = None,
) -> str:
    """Files as fenced blocks, in order, until the budget is spent.

    With `focus` (test file -> failing test names, see `focus_from_report`)
    such a test file shows only its imports and what its failing tests need
    (`focus_test_source`); source files are always shown whole.
    """
    parts: list[str] = []
    used = 0
    for rel in files:
        text = shadow.shown_text(rel)
        if focus and focus.get(rel) and is_test_file(rel):
            text = focus_test_source(text, focus[rel]) or text
        if used and used + len(text) > budget:
            parts.append(f"(more files not shown: {', '.join(files[len(parts):][:10])})")
            break
        label = " (a test: the specification, do not edit)" if tests_read_only and is_test_file(rel) else ""
        parts.append(f"### {rel}{label}\n```python\n{text[:budget]}\n```")
        used += len(text)
    return "\n\n".join(parts) or "(no files)"


def focus_from_report(report: TestReport | None) -> dict[str, set[str]]:
    """Test file -> failing tests as qualified names ('test_y', 'TestClass.test_y'), parameters dropped.

    A file with a collection error (no test name in its node id) is left out:
    it is shown whole.
    """
    focus: dict[str, set[str]] = {}
    broken: set[str] = set()
    for f in report.failures if report else []:
        parts = f.nodeid.split("[", 1)[0].split("::")
        file = f.file or parts[0]
        if len(parts) < 2:
            broken.add(file)
            continue
        focus.setdefault(file, set()).add(".".join(parts[1:]))
    return {file: names for file, names in focus.items() if file not in broken}


_IMPORTS = ("import_statement", "import_from_statement", "future_import_statement")
_DEFINITIONS = ("function_definition", "class_definition", "decorated_definition")
_WORD = re.compile(r"[A-Za-z_]\w*")


@dataclass
class _Chunk:
    """One top-level statement of a test file (with the comment lines right above it)."""

    first: int  # zero-based rows, inclusive
    last: int
    kind: str  # import | failing | test | helper | assign | other | drop
    names: set[str] = field(default_factory=set)
    tests: int = 0  # test functions in it (for the "not shown" count)
    cut: list[tuple[int, int]] = field(default_factory=list)  # rows of passing test methods inside a failing class


def _is_test_name(symbol: Symbol) -> bool:
    return symbol.name.startswith("Test" if symbol.kind == "class" else "test")


def _definition_chunk(first: int, last: int, top: Symbol, symbols: list[Symbol], wanted: set[str]) -> _Chunk:
    methods = [s for s in symbols if s.parent == top.qualname and s.kind != "class" and s.name.startswith("test")]
    if top.name in wanted:
        failing = {n for n in wanted if n.startswith(top.name + ".")}
        passing = [m for m in methods if failing and m.qualname not in failing]
        cut = [(m.start_line - 1, m.end_line - 1) for m in passing]
        return _Chunk(first, last, "failing", {top.name}, tests=len(passing), cut=cut)
    if _is_test_name(top) or methods:
        return _Chunk(first, last, "test", {top.name}, tests=max(len(methods), 1))
    autouse = any("autouse" in d for d in top.decorators)
    return _Chunk(first, last, "other" if autouse else "helper", {top.name})


def _chunks(data: bytes, wanted: set[str]) -> list[_Chunk] | None:
    """The top-level statements of a test file, classified; None if it does not parse."""
    tree = parse_python(data)
    if tree.root_node.has_error:
        return None
    symbols = analyse(data, tree).symbols
    tops = {s.span.start.line: s for s in symbols if s.parent is None}
    chunks: list[_Chunk] = []
    comment_from: int | None = None
    for node in tree.root_node.named_children:
        first, last = node.start_point[0], node.end_point[0]
        if node.type == "comment":
            comment_from = first if comment_from is None else comment_from
            continue
        start = comment_from if comment_from is not None and comment_from < first else first
        comment_from = None
        if node.type in _IMPORTS:
            chunks.append(_Chunk(start, last, "import"))
        elif node.type in _DEFINITIONS and first in tops:
            chunks.append(_definition_chunk(start, last, tops[first], symbols, wanted))
        elif node.type == "expression_statement" and node.named_children[0].type == "assignment":
            left = node.named_children[0].child_by_field_name("left")
            names = set(_WORD.findall(node_text(left, data))) if left is not None else set()
            chunks.append(_Chunk(start, last, "other" if "pytestmark" in names else "assign", names))
        elif node.type == "expression_statement" and node.named_children[0].type == "string":
            chunks.append(_Chunk(start, last, "drop"))  # the module docstring
        else:
            chunks.append(_Chunk(start, last, "other"))
    return chunks


def _needed(chunks: list[_Chunk], lines: list[str]) -> list[_Chunk]:
    """Imports, failing tests, and (transitively) the helpers, fixtures and constants they mention."""
    kept = [c for c in chunks if c.kind in ("import", "failing", "other")]
    words = set(_WORD.findall("\n".join("\n".join(lines[c.first : c.last + 1]) for c in kept)))
    grew = True
    while grew:
        grew = False
        for chunk in chunks:
            if chunk.kind in ("helper", "assign") and chunk not in kept and chunk.names & words:
                kept.append(chunk)
                words |= set(_WORD.findall("\n".join(lines[chunk.first : chunk.last + 1])))
                grew = True
    return sorted(kept, key=lambda c: c.first)


def focus_test_source(text: str, names: set[str]) -> str | None:
    """A test file cut down to its imports, the failing tests `names` and what they use.

    Passing tests (and passing methods of a failing test class) are left out
    and counted in a last line `# (N other tests not shown)`. None when the
    file does not parse or defines none of `names` (then show it whole).
    """
    chunks = _chunks(text.encode("utf-8"), {n for name in names for n in (name, name.split(".")[0])})
    if chunks is None or not any(c.kind == "failing" for c in chunks):
        return None
    lines = text.split("\n")
    blocks: list[str] = []
    for chunk in _needed(chunks, lines):
        rows = [r for r in range(chunk.first, chunk.last + 1) if not any(a <= r <= b for a, b in chunk.cut)]
        body = re.sub(r"\n\s*\n(\s*\n)+", "\n\n", "\n".join(lines[r] for r in rows)).rstrip()
        if blocks and chunk.first > 0 and not lines[chunk.first - 1].strip():
            blocks.append("")  # keep a blank line between blocks that had one
        blocks.append(body)
    hidden = sum(c.tests for c in chunks if c.kind in ("test", "failing"))
    note = f"\n\n# ({hidden} other test{'s' if hidden > 1 else ''} not shown)" if hidden else ""
    out = "\n".join(blocks) + note + "\n"
    return out if len(out) < len(text) else None


def layout(shadow: ShadowWorkspace) -> str:
    """A short listing of the workspace's Python files for the planner."""
    files = python_files(shadow, limit=60)
    return "Python files:\n" + "\n".join(f"- {f}" for f in files) if files else "The workspace has no Python files."
