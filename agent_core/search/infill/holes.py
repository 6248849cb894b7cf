"""Holes: the places around a suspect line where a model may write the code that fixes it.

For a suspicious line of a Python file, `holes_at` cuts, in this order:

- `line`: the line itself;
- `shown`: the line again, its old text shown as a comment just above the hole (`# buggy line:
  x = a - b`), as AlphaRepair shows the buggy line above its mask (Xia and Zhang, ESEC/FSE 2022).
  Hidden, the line is written anew from the code around it, and the model rarely comes near it;
  shown, it writes a variant of it. At the 29 one-line bugs of bench/real_corpus/ (bench/infill_shown.py,
  8 samples a hole) the shown hole wrote the original line at 11, the hidden one at 7, either at 15
  (docs/pipeline.md). A chat prompt shows every replaced hole's old text anyway: there the
  `shown` hole is the line's own again, and is not asked (generate.py `HoleFiller.asks`). A statement
  or block is cut hidden only: shown as comment lines (`shown` makes them, bench/infill_at_author.py
  `--shown` asks them), it came out even at the authors' lines of the real-history bugs;
- `statement`: the whole statement holding it (a simple statement's lines, or a compound
  statement's header: `for ...:`, `if ...:`), when that is more than the line and at most
  MAX_BLOCK_LINES lines (a table of 82 lines was asked as one hole in a real sqlparse bug's
  run: no sample could write it back within its token cap);
- `after` and `before`: an empty slot just after and just before the statement, at its
  indentation (after a compound header: the first line of its body; after a `def`: the
  first line after its docstring), for what is missing there: a guard, a `continue`, a
  `return`, a default assigned. No `after` slot follows a statement that leaves the block
  (`return`, `raise`, `continue`, `break`, `pass`), no `before` slot precedes a `def`, and
  none is cut MAX_BLOCK_LINES lines or more from the line (in the middle of a long table the
  statement's ends are far from what the line is about);
- `block`: the innermost `if`/`for`/`while`/`with`/`try` around the statement (or the
  statement itself when it is one), when it spans at most MAX_BLOCK_LINES lines;
- `end`: with a `block`, an empty slot just after it, at its indentation: what runs
  once the loop or branch is done (a guard after a `while`, a last step after a `for`);
- `and`, `or`: on a one-line `if`/`elif`/`while` header, a place inside the line just after
  its condition, behind ` and ` (` or `): the model writes only the condition added to it,
  the rest of the line kept (`if max == 0 and <hole>:`). A condition missing a clause is
  among the commonest fixes (Pan, Kim and Whitehead, "Toward an understanding of bug fix
  patterns", EMSE 2009: the if-condition changes lead their catalogue), and the one the
  line's own hole does worst: asked for the whole line, the bundled model wrote it back or
  wrote another statement; asked for the clause, it wrote the author's
  `self.minLen == 1` in 3 of 6 samples on a real pyparsing bug (an infill of AlphaRepair's
  kind, which keeps part of the buggy line and masks the rest: Xia and Zhang, ESEC/FSE 2022).
  A line of the header's body (not its `else`) gets the header's clauses too: a branch
  taken when it should not be runs its body only in the failing tests, so the spectrum
  ranks the body above the condition every test runs (in a real sqlparse bug the `return`
  under `if has_create and has_table:` was ranked, the `if` line was not).
- `arg`: inside the widest call (or bracketed tuple, list, set or dict) that opens and closes on
  the line, a place just before its closing bracket, behind `, `: the model writes only the
  argument or item the brackets miss (`fromtimestamp(value, <hole>)`), the rest of the line
  kept. A keyword argument a call never had is a fix no template writes (which keyword, which
  value), and one the line's own hole serves badly: with the last keyword argument deleted from
  15 one-line calls of click, jinja2, httpx and markdown-it, 6 samples each, the
  bundled model wrote it back at 7 of the `arg` holes (175 s) and at 2 of the line holes
  (270 s) (2026-12-05, idle machine; code the model may have seen in training, so a
  ratio, not a rate).

Two slots at one place (the slot before a statement and the slot after the block
just above it) are one hole: the first cut.

A `Hole` carries the code before and after it, bounded: the enclosing function (its
class's header for a method) and the module's imports, cut to BEFORE_CHARS and
AFTER_CHARS at line boundaries, nearest the hole kept. The same text serves every
sample of the hole, so a server's prompt cache reads it once. In a function too long
for BEFORE_CHARS the imports stay and the function's lines shown start at a multiple of
SNAP_LINES from its first line: the holes of nearby lines then share the start of
their prompt, and a server that caches the previous prompt reads only where they part.

Every hole's prompt is read by the model before its first sample (25-80 tokens a
second for the bundled model on two cores): with 3,000 characters before and 1,200
after, a new hole cost 10-25 s of a task's time before it wrote anything, and its
prompt was most of the tokens each sample was billed.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, replace
from typing import Literal, Protocol

from agent_core.analysis import pysyntax
from agent_core.search.linetext import on_line, span

HoleKind = Literal["line", "shown", "statement", "after", "before", "block", "end", "and", "or", "arg"]
MAX_BLOCK_LINES = 8
BEFORE_CHARS = 1600
AFTER_CHARS = 600
IMPORT_CHARS = 500  # of the module's imports, put before the function (within BEFORE_CHARS)
SNAP_LINES = 8
SHOWN_PREFIX = "# buggy line: "
_LEAVES = (ast.Return, ast.Raise, ast.Continue, ast.Break, ast.Pass)
_BLOCKS = (ast.If, ast.For, ast.AsyncFor, ast.While, ast.With, ast.AsyncWith, ast.Try)
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)
_JOINS: dict[HoleKind, str] = {"and": " and ", "or": " or "}
_LOOSE = (ast.IfExp, ast.Lambda, ast.NamedExpr)  # a condition put in brackets before any clause is added to it
MAX_ARG_HOLES = 1  # `arg` holes of one line: its widest brackets
_BRACKETED = (ast.Call, ast.Tuple, ast.List, ast.Set, ast.Dict)
_OPENERS, _CLOSERS = "([{", ")]}"


@dataclass(frozen=True)
class Hole:
    """Lines `first`..`last` of `path` (1-based, inclusive) to be written anew; an empty slot when `last` is
    `first - 1` (the new lines go just before line `first`).

    `original` is the text of those lines ("" for a slot), `indent` the indentation the new lines start
    at, `before` and `after` the bounded code on either side (`before` ends with a newline, `after`
    starts at the line after the hole). `anchor` is the line a slot's text joins into a candidate
    (the statement's first line for `before`, its last for `after`).

    A hole inside line `first` (`and`, `or`, `arg`) has the line's kept text on either side of it: `head`
    (its text up to the hole, which `before` ends with) and `tail` (the rest, which `after` starts
    with); the model's answer goes between them, on that line. `original` is then "".
    """

    path: str
    first: int
    last: int
    original: str
    indent: str
    before: str
    after: str
    kind: HoleKind
    anchor: int = 0
    head: str = ""
    tail: str = ""

    @property
    def is_slot(self) -> bool:
        return self.last < self.first

    @property
    def inline(self) -> bool:
        """Whether the hole is inside a line (its answer goes between `head` and `tail`)."""
        return bool(self.head)

    @property
    def size(self) -> int:
        """How many lines the hole replaces (0 for a slot)."""
        return self.last - self.first + 1

    @property
    def label(self) -> str:
        """e.g. `line 12 (statement)`, `slot after line 12`, `slot after the block ending line 14`."""
        if self.kind == "end":
            return f"slot after the block ending line {self.anchor}"
        if self.kind == "arg":
            return f"line {self.first} (argument at column {len(self.head) + 1})"
        if self.inline:
            return f"line {self.first} (condition {self.kind} ...)"
        if self.is_slot:
            return f"slot {self.kind} line {self.anchor}"
        span = f"line {self.first}" if self.size == 1 else f"lines {self.first}-{self.last}"
        return f"{span} ({self.kind})"


class SuspectLike(Protocol):
    """What holes need of a localization suspect (search/localize.py's `Suspect`)."""

    file: str
    lines: list[int]


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


def _header_end(node: ast.stmt) -> int:
    """The last line of a compound statement's header (the line before its body starts)."""
    body = getattr(node, "body", None)
    if not body:
        return node.lineno
    first = body[0]
    start = min([first.lineno, *(d.lineno for d in getattr(first, "decorator_list", []))])
    return max(node.lineno, start - 1)


def _chain(tree: ast.Module, line: int) -> list[ast.stmt]:
    """The statements containing `line`, outermost first (each nested in the one before)."""
    out: list[ast.stmt] = []
    body: Iterable[ast.AST] = tree.body
    while True:
        found = None
        for node in body:
            if isinstance(node, ast.stmt) and node.lineno <= line <= (node.end_lineno or node.lineno):
                found = node
                break
        if found is None:
            return out
        out.append(found)
        body = [child for field in ("body", "orelse", "finalbody") for child in getattr(found, field, [])]
        body += [child for handler in getattr(found, "handlers", []) for child in handler.body]
        body += [child for case in getattr(found, "cases", []) for child in case.body]


def _cut_tail(text: str, limit: int) -> str:
    """The last whole lines of `text` within `limit` characters."""
    if len(text) <= limit:
        return text
    cut = text[-limit:]
    return cut[cut.index("\n") + 1 :] if "\n" in cut else cut


def _cut_head(text: str, limit: int) -> str:
    """The first whole lines of `text` within `limit` characters."""
    if len(text) <= limit:
        return text
    cut = text[:limit]
    return cut[: cut.rindex("\n") + 1] if "\n" in cut else cut


@dataclass(frozen=True)
class _Context:
    """The source's lines and the bounds of the code shown around a hole."""

    lines: list[str]
    start: int  # first line of the enclosing function (or 1)
    end: int  # its last line (or the file's)
    preamble: str  # the module's imports and a method's class header, put before the function

    def before(self, first: int) -> str:
        own = "".join(line + "\n" for line in self.lines[self.start - 1 : first - 1])
        if len(self.preamble) + len(own) <= BEFORE_CHARS:
            return self.preamble + own
        kept = _cut_tail(own, max(0, BEFORE_CHARS - len(self.preamble)))
        skipped = first - self.start - kept.count("\n")  # the function's lines left out
        start = self.start + -(-skipped // SNAP_LINES) * SNAP_LINES  # rounded up to a multiple of SNAP_LINES
        return self.preamble + "".join(line + "\n" for line in self.lines[start - 1 : first - 1])

    def after(self, last: int) -> str:
        return _cut_head("".join(line + "\n" for line in self.lines[last : self.end]), AFTER_CHARS)


def _context(tree: ast.Module, lines: list[str], chain: list[ast.stmt]) -> _Context:
    functions = [n for n in chain if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    if not functions:
        return _Context(lines, 1, len(lines), "")
    function = functions[-1]
    start = min([function.lineno, *(d.lineno for d in function.decorator_list)])
    imports = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    preamble = _cut_head("".join("\n".join(lines[n.lineno - 1 : n.end_lineno]) + "\n" for n in imports), IMPORT_CHARS)
    owner = chain[chain.index(function) - 1] if chain.index(function) else None
    if isinstance(owner, ast.ClassDef):
        header = "\n".join(lines[owner.lineno - 1 : _header_end(owner)]) + "\n"
        preamble = (preamble + "\n\n" if preamble else "") + header
    elif preamble:
        preamble += "\n\n"
    return _Context(lines, start, function.end_lineno or len(lines), preamble)


def _hole(path: str, ctx: _Context, first: int, last: int, kind: HoleKind, indent: str, anchor: int = 0) -> Hole:
    original = "\n".join(ctx.lines[first - 1 : last])
    return Hole(path, first, last, original, indent, ctx.before(first), ctx.after(last), kind, anchor)


def _clauses(path: str, ctx: _Context, statement: ast.stmt, line: int) -> list[Hole]:
    """The `and` and `or` holes of `statement` when it is an `if`/`elif`/`while` whose header is line `line` alone
    (a condition over several lines is left to the statement's hole); [] otherwise."""
    if not isinstance(statement, ast.If | ast.While) or not statement.lineno == _header_end(statement) == line:
        return []
    test = statement.test
    if test.lineno != line or test.end_lineno != line:
        return []
    text = ctx.lines[line - 1]
    start, end = span(text, test)
    condition, tail = text[start:end], text[end:]
    out = []
    for kind, join in _JOINS.items():
        loose = isinstance(test, _LOOSE) or kind == "and" and isinstance(test, ast.BoolOp) and \
            isinstance(test.op, ast.Or)
        head = text[:start] + (f"({condition})" if loose else condition) + join
        out.append(Hole(path, line, line, "", _indent(text), ctx.before(line) + head, tail + "\n" + ctx.after(line),
                        kind, head=head, tail=tail))
    return out


def _arguments(path: str, ctx: _Context, statement: ast.stmt, line: int) -> list[Hole]:
    """The `arg` holes of line `line`: in each call, and each tuple, list, set or dict display, of `statement`
    that opens and closes on that line, a place just before its closing bracket, after a `, ` (an empty call's
    first argument: right after its `(`); the widest brackets first, at most MAX_ARG_HOLES."""
    text = ctx.lines[line - 1]
    found: list[tuple[int, int, bool]] = []  # (-width, end, whether empty) of each pair of brackets
    for node in ast.walk(statement):
        if not isinstance(node, _BRACKETED) or not on_line(node, line):
            continue
        call = isinstance(node, ast.Call)
        empty = not (node.args or node.keywords if isinstance(node, ast.Call) else
                     node.keys if isinstance(node, ast.Dict) else node.elts)  # isinstance: mypy narrows by it
        start, end = span(text, node)
        if empty and not call or text[end - 1] not in _CLOSERS or not call and text[start] not in _OPENERS:
            continue  # `[]` (a list to be filled is not a missing item), a tuple without brackets
        found.append((start - end, end, empty))
    out = []
    for _, end, empty in sorted(found)[:MAX_ARG_HOLES]:
        inside = text[: end - 1].rstrip()
        head = inside if empty else inside + (" " if inside.endswith(",") else ", ")
        tail = text[end - 1 :]
        out.append(Hole(path, line, line, "", _indent(text), ctx.before(line) + head, tail + "\n" + ctx.after(line),
                        "arg", head=head, tail=tail))
    return out


def shown(hole: Hole) -> Hole:
    """`hole` (a replaced one) with its old text as comment lines just above it, at its indentation: one line
    behind SHOWN_PREFIX, several under `# buggy lines:`, each line's own indentation beyond the hole's kept."""
    lines = hole.original.split("\n")
    if len(lines) == 1:
        comment = f"{hole.indent}{SHOWN_PREFIX}{lines[0].strip()}\n"
    else:
        own = [line[len(hole.indent):] if line.startswith(hole.indent) else line.strip() for line in lines]
        comment = f"{hole.indent}# buggy lines:\n" + "".join(f"{hole.indent}#   {line}".rstrip() + "\n" for line in own)
    return replace(hole, kind="shown", before=hole.before + comment)


def _block(chain: list[ast.stmt], statement: ast.stmt) -> ast.stmt | None:
    """The innermost compound statement (not a def or class) holding `statement`, or `statement` itself when it
    is one, within MAX_BLOCK_LINES lines."""
    for node in reversed(chain[: chain.index(statement) + 1]):
        if isinstance(node, _SCOPES):
            return None
        span = (node.end_lineno or node.lineno) - node.lineno + 1
        if isinstance(node, _BLOCKS):
            return node if span <= MAX_BLOCK_LINES else None
    return None


def holes_at(path: str, source: str, line: int) -> list[Hole]:
    """The holes around line `line` (1-based) of `source` (the text of `path`), in the order of the module
    docstring; [] when the file does not parse or the line holds no statement."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return []
    lines = source.split("\n")
    chain = _chain(tree, line)
    if not chain or isinstance(chain[-1], _SCOPES) and line > _header_end(chain[-1]):
        return []  # a blank line or a comment between statements
    statement = chain[-1]
    ctx = _context(tree, lines, chain)
    compound = bool(getattr(statement, "body", None))
    first = statement.lineno
    last = _header_end(statement) if compound else statement.end_lineno or first
    indent = _indent(lines[first - 1])
    own = _hole(path, ctx, line, line, "line", _indent(lines[line - 1]))
    out = [own, shown(own), *_clauses(path, ctx, statement, line), *_arguments(path, ctx, statement, line)]
    guard = chain[-2] if len(chain) > 1 else None
    if isinstance(guard, ast.If | ast.While) and statement in guard.body:  # the condition the line runs under
        out += _clauses(path, ctx, guard, guard.lineno)
    if (first, last) != (line, line) and first <= line <= last and last - first < MAX_BLOCK_LINES:
        out.append(_hole(path, ctx, first, last, "statement", indent))
    if compound and not isinstance(statement, ast.ClassDef) and line <= last:
        body: list[ast.stmt] = statement.body  # type: ignore[attr-defined]  # compound: it has a body
        at = last
        if isinstance(statement, ast.FunctionDef | ast.AsyncFunctionDef) and ast.get_docstring(statement) is not None:
            at = body[0].end_lineno or at  # a function's first lines come after its docstring
        out.append(_hole(path, ctx, at + 1, at, "after", _indent(lines[body[0].lineno - 1]), anchor=at))
    elif not compound and not isinstance(statement, _LEAVES) and last - line < MAX_BLOCK_LINES:
        out.append(_hole(path, ctx, last + 1, last, "after", indent, anchor=last))
    if not isinstance(statement, _SCOPES) and line - first < MAX_BLOCK_LINES:
        out.append(_hole(path, ctx, first, first - 1, "before", indent, anchor=first))
    block = _block(chain, statement)
    if block is not None:
        end = block.end_lineno or block.lineno
        block_indent = _indent(lines[block.lineno - 1])
        if (block.lineno, end) not in {(h.first, h.last) for h in out}:
            out.append(_hole(path, ctx, block.lineno, end, "block", block_indent))
        out.append(_hole(path, ctx, end + 1, end, "end", block_indent, anchor=end))
    return out


def _place(hole: Hole) -> tuple[str, int, int, int | str]:
    """Where a hole is: a slot by its line and indentation (the slot after one statement is the slot before
    the next), a replaced hole by its lines, a hole inside a line by its line, kind and column."""
    where = hole.indent if hole.is_slot else f"{hole.kind} {len(hole.head)}" if hole.inline else \
        hole.kind if hole.kind == "shown" else hole.anchor
    return (hole.path, hole.first, hole.last, where)


def _cut(places: Iterable[tuple[str, int]], sources: Mapping[str, str]) -> list[tuple[int, int, Hole]]:
    """(place's rank, order among its holes, hole) of each (path, line) in `places`, each place cut once (the
    first cut); a path missing from `sources` is skipped."""
    out: list[tuple[int, int, Hole]] = []
    seen: set[tuple[str, int, int, int | str]] = set()
    for rank, (path, line) in enumerate(places):
        source = sources.get(path)
        for order, hole in enumerate(holes_at(path, source, line) if source is not None else []):
            key = _place(hole)
            if key not in seen:
                seen.add(key)
                out.append((rank, order, hole))
    return out


def place_holes(places: Iterable[tuple[str, int]], sources: Mapping[str, str]) -> list[Hole]:
    """The holes of each (path, line) in `places`, in that order, each place cut once; `sources` maps a path to
    its text (a path missing there is skipped)."""
    return [hole for *_, hole in _cut(places, sources)]


# How far down the line ranking a hole of each kind is asked, in lines: a line's own text first (shown, then hidden:
# the shown hole wrote the right line more often, module docstring), the slots beside
# it as if it were one or two lines less suspicious, its statement and block later. With about five holes filled
# in a task's time, cutting every hole of the first line before the second line's was asked left the lines
# ranked 2-5 (where localization put the author's fix in three real-history bugs) without a fill. A condition's
# added clause comes just after the line's own hole (the probe in the module docstring); an `or` clause later (in
# the same probe its six answers were none of them a fix); a call's missing argument a line down (its probe, also
# in the module docstring).
KIND_COST: dict[HoleKind, float] = {"shown": 0.0, "line": 0.25, "and": 0.5, "arg": 1.0, "after": 1.5, "before": 1.5,
                                    "statement": 2.0, "or": 2.5, "block": 3.0, "end": 3.0}


def spread_holes(places: Iterable[tuple[str, int]], sources: Mapping[str, str]) -> list[Hole]:
    """The holes of `place_holes(places, sources)`, ordered by the place's rank (its index in `places`) plus
    KIND_COST of the hole's kind; among equals, the better place first, then `holes_at`'s order."""
    keyed = [(rank + KIND_COST[hole.kind], rank, order, hole) for rank, order, hole in _cut(places, sources)]
    return [hole for *_, hole in sorted(keyed, key=lambda entry: entry[:3])]


def suspect_holes(
    suspects: Iterable[SuspectLike], sources: Mapping[str, str], *, max_suspects: int = 3, lines_per_suspect: int = 2
) -> list[Hole]:
    """The holes of the best `lines_per_suspect` lines of the first `max_suspects` suspects (localize.py ranks
    them best first), in that order, each place cut once; `sources` maps a suspect's file to its text (a
    file missing there is skipped)."""
    places = [(s.file, line) for s in list(suspects)[:max_suspects] for line in s.lines[:lines_per_suspect]]
    return place_holes(places, sources)
