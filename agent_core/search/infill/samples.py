"""A hole's samples turned into the search's candidates: cut, re-indented, spliced, parsed, deduplicated.

A model's middle often runs past the hole: it goes on with the code after it, or
leaves the block. `fit` keeps the lines up to where the indentation drops below
the sample's first line, where the sample starts repeating the code after the
hole, or the hole's size (plus EXTRA_LINES and as many again as the hole has
lines, as a rewrite may add a guard or a loop around them, unless it is a
compound statement's header; a slot takes up to SLOT_LINES), and
re-indents them to the hole's indentation (the sample's own indentation kept
relative to its first line). Where the hole's text is whole statements, those
sizes are counted in statements, not lines: a model that wraps a call over
several lines (`lines.append(` / `    fmt(a, b)` / `)`) writes one statement, and counting
its lines cut it after the first two, where it does not parse (in the attrs
bug's run at 9c192da, the model's wrapped answers at a one-line hole were all
lost that way). A hole that is part of a statement (a line that opens a bracket
closed further down) keeps counting lines: its answer must fit the code around it.
A hole inside a line (a condition's added clause, a call's added argument) takes
the answer's first line, less a copy of the line's kept rest at its end (the
model often closes the header or the call itself: `self.minLen == 1:` before the
kept `:`, `tz=utc)` before the kept `)`), put between the line's kept parts.
Comment lines an answer starts with are dropped (below the comment a `shown` hole puts
above it, the model may write a comment of its own before the line), and so is any comment it writes
that the hole's own text lacks (`return next(iter(mapping))  # correct line`).
`candidate` splices the lines into the file and keeps the longest leading part
that still parses, as a `Mutant`. A `Sampler` drops the samples that change
nothing or that another sample (of this hole, or of another hole of the file
sharing its `seen`) already wrote: the same syntax
tree, so `a+b` and `a + b` are one candidate. It drops too the samples after which
more statements can never run than before (they follow a `return`, `raise`,
`break` or `continue` in their block: `dead_statements`): a `return` put in a
slot before a line is that line's replacement with the line left behind, dead,
which the line's own hole makes without it; a `return` in place of a line that
leaves the rest of its block behind makes the function do less, not something
else (counted in `Sampler.dead`). And it drops the samples that read a name nothing can
have bound where they read it (analysis/unbound.py: one the code after the hole assigns, one
made up): run, they raise NameError or UnboundLocalError (counted in `Sampler.unbound`).

A line that has twins (its copies in the same function, search/twins.py)
gets, after each candidate that rewrites it as one line, a second candidate: the same rewrite
at each twin too (counted in `Sampler.twins`). A candidate that writes a condition (a clause
added, a guard's `if`) is followed by the same with that condition negated (turned.py; counted
in `Sampler.turned`). A slot's sample that makes the call of a statement beside it within more
(`yield from child.walk()` in the slot just above `child.walk()`) is first tried in that statement's place
(`absorbing`): joined to it, the call runs twice.

`sample_plan` spreads a hole's samples over temperatures and seeds, so the
first samples are the model's likeliest answers and the later ones its more
varied guesses. (Drawing the hottest second, so that the three answers that may
end a hole span the range, was measured on 2026-12-04 and left out: at the
line holes whose first answers wrote the line back, the sample at 1.0 wrote it
back too, and six unfixed real-history bugs took 13% more tokens for 9% more
candidates and no fix.)
"""

from __future__ import annotations

import ast
import io
import textwrap
import tokenize
from dataclasses import dataclass, field, replace

from agent_core.analysis import pysyntax
from agent_core.analysis.unbound import UnboundCheck
from agent_core.search.candidate import Mutant
from agent_core.search.infill.holes import Hole
from agent_core.search.infill.turned import turned_round
from agent_core.search.twins import Twins

INFILL_TIER = 30  # after every single-edit tier of mutants.py (0-12) and the templates' (20)
EXTRA_LINES = 1  # a replaced line may come back one line longer (a hole of n lines: up to 2n)
SLOT_LINES = 3  # an empty slot takes a guard and its body
MIN_TEMPERATURE, MAX_TEMPERATURE = 0.2, 1.0
DESCRIPTION_CHARS = 80


def sample_plan(samples: int, low: float = MIN_TEMPERATURE, high: float = MAX_TEMPERATURE,
                seed: int = 0) -> list[tuple[float, int]]:
    """(temperature, seed) of each of `samples` samples: temperatures rising evenly from `low` to `high`,
    a different seed each."""
    if samples <= 1:
        return [(low, seed)][:samples]
    step = (high - low) / (samples - 1)
    return [(round(low + i * step, 3), seed + i) for i in range(samples)]


def _indent(text: str) -> str:
    return text[: len(text) - len(text.lstrip(" \t"))]


def _statements(lines: list[str]) -> tuple[list[bool], bool]:
    """For each of `lines`, whether it begins a statement (False: it goes on with one begun above it, inside
    brackets, a triple-quoted string or after a backslash); and whether the last statement is left open.

    Python's own tokenizer decides (a statement ends at its NEWLINE token). Text it cannot read on (an
    indentation it cannot follow) ends the reading there: the lines after it count as statements of their
    own, as if counted by lines."""
    starts = [not line.strip() for line in lines]
    first, reached = True, 0
    try:
        for token in tokenize.generate_tokens(io.StringIO("".join(line + "\n" for line in lines)).readline):
            reached = max(reached, token.end[0])
            if token.type == tokenize.NEWLINE:
                first = True
            elif token.type not in (tokenize.NL, tokenize.COMMENT, tokenize.INDENT, tokenize.DEDENT,
                                    tokenize.ENDMARKER) and first:
                first, starts[token.start[0] - 1] = False, True
    except tokenize.TokenError:  # the text ends inside a statement: the lines read so far are as marked
        return starts, True
    except (SyntaxError, ValueError):
        for index in range(reached, len(lines)):
            starts[index] = True
        return starts, False
    return starts, not first


def _dedented(lines: list[str]) -> list[str]:
    """`lines` less the first one's indentation (a line indented less loses all of its own)."""
    base = _indent(lines[0]) if lines else ""
    return [line[len(base):] if line.startswith(base) else line.lstrip() for line in lines]


def _whole(text: str) -> bool:
    """Whether `text` (a hole's original lines) is whole statements (not the part of one a line can be)."""
    starts, open_end = _statements(_dedented(text.split("\n")))
    return starts[0] and not open_end


def _fitted(hole: Hole, lines: list[str]) -> tuple[list[str], bool]:
    """The lines of `lines` that fill `hole`, re-indented to it, and whether the lines after them can no longer
    change that (a statement left the block or repeats the code after the hole, or the hole's limit is reached
    with its last statement complete)."""
    while lines and (not lines[0].strip() or lines[0].lstrip().startswith("#")):  # a comment first (`# fixed
        lines = lines[1:]  # line: ...` below a `shown` hole's comment) is no code; the code after it is
    if not lines:
        return [], False
    base = _indent(lines[0])
    following = next((line.strip() for line in hole.after.split("\n") if line.strip()), "")
    header = hole.original.rstrip().endswith(":")
    whole = hole.is_slot or _whole(hole.original)
    if whole:  # count statements (see the module docstring), as many as the hole's size allows lines
        starts, open_end = _statements(_dedented(lines))
    else:  # part of a statement: count lines
        starts, open_end = [True] * len(lines), False
    if hole.is_slot:
        limit = SLOT_LINES
    elif header:  # its body follows in `after`: the hole takes the header, one statement however many lines
        limit = 1 if whole else hole.size
    else:
        limit = hole.size + EXTRA_LINES + hole.size - 1
    kept: list[str] = []
    count = 0
    for index, line in enumerate(lines):
        if not line.strip():
            kept.append("")
            continue
        if starts[index]:
            if index and (len(_indent(line)) < len(base) or line.strip() == following):
                return [line for line in kept if line], True  # left the block, or writes what follows the hole
            if count == limit:
                return [line for line in kept if line], True
            count += 1
        kept.append(hole.indent + line[len(base) :] if line.startswith(base) else hole.indent + line.lstrip())
    return [line for line in kept if line], count >= limit and not open_end


def _inline(hole: Hole, middle: str) -> list[str]:
    """The line a sample's `middle` makes of a hole inside a line: its first line between the line's kept parts
    (less a copy of the kept rest it ends with), or [] when it wrote nothing."""
    answer = middle.replace("\r\n", "\n").split("\n")[0].strip()
    if answer.startswith(hole.head.strip()):  # a chat answer that wrote the whole line
        answer = answer[len(hole.head.strip()) :]
    rest = hole.tail.split("#")[0].strip()  # the kept rest's code (a header's `:`), not its comment
    for copy in (rest, rest[:1]):  # all of it, or the header's `:` before a body on the same line
        if copy and answer.endswith(copy):
            answer = answer[: -len(copy)].rstrip()
            break
    return [hole.head + answer.strip() + hole.tail] if answer.strip() else []


def _own_comments(lines: list[str], original: str) -> list[str]:
    """`lines` without the comments the model wrote that the hole's original text does not have (`# correct
    line` after the code, echoing the `# buggy line:` a `shown` hole puts above it): a reviewer reads them in the
    fix. A comment line left empty goes; lines that do not tokenize stay as they are."""
    try:
        tokens = list(tokenize.generate_tokens(io.StringIO("\n".join(lines) + "\n").readline))
    except (tokenize.TokenError, IndentationError, SyntaxError):
        return lines
    out = list(lines)
    for token in tokens:
        if token.type == tokenize.COMMENT and token.string.strip() not in original:
            row, col = token.start
            out[row - 1] = out[row - 1][:col].rstrip()
    return [line for line, was in zip(out, lines, strict=True) if line.strip() or not was.strip()]


def fit(hole: Hole, middle: str) -> list[str]:
    """The lines of a sample's `middle` that fill `hole`, re-indented to it, less the comments it added ([] when
    nothing is left)."""
    if hole.inline:
        return _own_comments(_inline(hole, middle), hole.head + hole.tail)  # an inline hole keeps no `original`
    lines = _fitted(hole, [line.rstrip() for line in middle.replace("\r\n", "\n").split("\n")])[0]
    return _own_comments(lines, hole.original)


def fit_done(hole: Hole, middle: str) -> bool:
    """Whether the answer `middle` so far already holds all `fit` will keep of it, whatever comes after: its
    complete lines (not the last one, which may still grow) leave the block, repeat the line after the hole
    or reach the hole's limit, or its started last line is already shallower than the first. A sample's
    stream can end there (the tokens after it would be thrown away). A hole inside a line: once a line is
    complete."""
    if hole.inline:
        return "\n" in middle
    *complete, last = [line.rstrip() for line in middle.replace("\r\n", "\n").split("\n")]
    if _fitted(hole, complete)[1]:
        return True
    started = [line for line in complete if line.strip()]  # a started last line's indentation is settled
    if not (started and last.strip()) or _statements(started)[1]:
        return False  # nothing started yet, or the last line goes on with an open statement
    return len(_indent(last)) < len(_indent(started[0]))


def _splice(hole: Hole, lines: list[str], source_lines: list[str]) -> Mutant:
    text = "\n".join(lines)
    head = lines[0].strip()
    head = head if len(head) <= DESCRIPTION_CHARS else head[: DESCRIPTION_CHARS - 3] + "..."
    if hole.is_slot:
        anchor = source_lines[hole.anchor - 1]
        joined = f"{text}\n{anchor}" if hole.kind == "before" else f"{anchor}\n{text}"
        return Mutant(hole.path, hole.anchor, joined, f"model infill {hole.kind} line {hole.anchor}: {head}",
                      INFILL_TIER, hole.anchor)
    if hole.inline:  # what was added: the line's text between its kept parts
        added = text[len(hole.head) : len(text) - len(hole.tail)].strip()
        return Mutant(hole.path, hole.first, text, f"model infill at line {hole.first}: {hole.kind} {added}"[:120],
                      INFILL_TIER, hole.last)
    where = f"line {hole.first}" if hole.size == 1 else f"lines {hole.first}-{hole.last}"
    return Mutant(hole.path, hole.first, text, f"model infill at {where} ({hole.kind}): {head}", INFILL_TIER,
                  hole.last)


def absorbing(hole: Hole, lines: list[str], source_lines: list[str]) -> Mutant | None:
    """A slot's lines in place of a statement beside the slot (its anchor, or the line on the slot's other side:
    after a `for` header, the body's first line), when that statement is a call alone on its line at the lines'
    indentation (`child.walk()`) and the lines make that same call within more (`yield from child.walk()`): the
    model wrote the line anew next to it, and joined to it the call would run twice (the line's own hole may
    never be asked, or answered so). None otherwise."""
    if not hole.is_slot or hole.kind not in ("before", "after") or not lines:
        return None
    try:
        written = pysyntax.parse(textwrap.dedent("\n".join(lines)))
    except (SyntaxError, ValueError, RecursionError):
        return None
    calls = {ast.dump(n) for n in ast.walk(written) if isinstance(n, ast.Call)}
    for line in (hole.anchor, hole.anchor + (1 if hole.kind == "after" else -1)):
        text = source_lines[line - 1] if 1 <= line <= len(source_lines) else ""
        if not text.strip() or _indent(text) != _indent(lines[0]):
            continue
        try:
            beside = pysyntax.parse(text.strip()).body
        except (SyntaxError, ValueError, RecursionError):
            continue
        if (len(beside) == 1 and isinstance(beside[0], ast.Expr) and isinstance(beside[0].value, ast.Call)
                and ast.dump(beside[0].value) in calls):
            head = lines[0].strip()[:DESCRIPTION_CHARS]
            return Mutant(hole.path, line, "\n".join(lines), f"model infill in place of line {line}: {head}",
                          INFILL_TIER, line)
    return None


def _tree(source: str) -> str | None:
    try:
        return ast.dump(pysyntax.parse(source))
    except (SyntaxError, ValueError, RecursionError):
        return None


_ENDS = (ast.Return, ast.Raise, ast.Break, ast.Continue)


def dead_statements(source: str) -> int:
    """How many statements of `source` follow a `return`, `raise`, `break` or `continue` of their own block (none
    of them can run); 0 when it does not parse."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError, RecursionError):
        return 0
    dead = 0
    for node in ast.walk(tree):
        for name in ("body", "orelse", "finalbody"):
            block = getattr(node, name, None)
            if isinstance(block, list) and block and isinstance(block[0], ast.stmt):
                ends = [index for index, statement in enumerate(block) if isinstance(statement, _ENDS)]
                dead += len(block) - ends[0] - 1 if ends else 0
    return dead


@dataclass
class Sampler:
    """The candidates of one hole of `source`, sample by sample: each new one kept once. `seen` holds the
    syntax trees already made (pass one set to the samplers of several holes of a file: a candidate that
    another hole made is not made again)."""

    hole: Hole
    source: str
    seen: set[str] = field(default_factory=set)
    mutants: list[Mutant] = field(default_factory=list)
    unchanged: int = 0  # samples that wrote the hole's code back as it was
    twins: int = 0  # candidates that made a sample's rewrite at the line's twins too (of `mutants`)
    dead: int = 0  # samples dropped because more statements could never run after them
    unbound: int = 0  # samples dropped because they read a name nothing can have bound there (analysis/unbound.py)
    turned: int = 0  # candidates that negated the condition a sample wrote (of `mutants`, turned.py)
    _original: str | None = field(default=None, init=False, repr=False)
    _dead: int = field(default=0, init=False, repr=False)
    _unbound: UnboundCheck | None = field(default=None, init=False, repr=False)
    _twins: Twins | None = field(default=None, init=False, repr=False)

    def __post_init__(self) -> None:
        self._original = _tree(self.source)
        self._dead = dead_statements(self.source)
        self._unbound = UnboundCheck(self.source, self.hole.path)
        if self._original is not None:
            self.seen.add(self._original)  # a sample that changes nothing is no candidate
        if self.hole.size == 1 and not self.hole.is_slot:  # one line rewritten: its own, or inside it
            twins = Twins(self.source)
            self._twins = twins if twins.of(self.hole.first) else None

    def add(self, middle: str) -> Mutant | None:
        """The candidate a sample's `middle` makes, kept; None when it fills nothing, does not parse, changes
        nothing, repeats an earlier sample, leaves statements that can never run or reads a name nothing can
        have bound there."""
        lines = fit(self.hole, middle)
        source_lines = self.source.split("\n")
        for count in range(len(lines), 0, -1):  # a sample cut at its token limit ends in half a line
            mutant = _splice(self.hole, lines[:count], source_lines)
            applied = mutant.applied(self.source)
            tree = _tree(applied)
            if tree is None:
                continue
            if tree in self.seen:
                self.unchanged += tree == self._original
                return None
            self._add_variant(absorbing(self.hole, lines[:count], source_lines))  # tried before the slot's own
            self.seen.add(tree)
            if dead_statements(applied) > self._dead:
                self.dead += 1
                return None
            if self._unbound is not None and self._unbound.adds(mutant.line, mutant.last, applied):
                self.unbound += 1
                return None
            self.mutants.append(mutant)
            if self._twins is not None:
                self._add_twin(self._twins.made_at(mutant))
            self._add_turned(lines[:count], source_lines)
            return mutant
        return None

    def _add_turned(self, lines: list[str], source_lines: list[str]) -> None:
        """After a candidate that writes a condition, the same with that condition negated (turned.py)."""
        turned = turned_round(self.hole, lines)
        if turned is None:
            return
        mutant = _splice(self.hole, turned, source_lines)
        self.turned += self._add_variant(replace(mutant, description=f"{mutant.description} (the model's condition "
                                                                     "negated)"))

    def _add_variant(self, mutant: Mutant | None) -> bool:
        """Whether `mutant` is kept as a candidate of the hole: not when it does not parse, repeats one, leaves
        statements that can never run or reads a name nothing binds there."""
        if mutant is None:
            return False
        applied = mutant.applied(self.source)
        tree = _tree(applied)
        if tree is None or tree in self.seen or dead_statements(applied) > self._dead or (
                self._unbound is not None and self._unbound.adds(mutant.line, mutant.last, applied)):
            return False
        self.seen.add(tree)
        self.mutants.append(mutant)
        return True

    def _add_twin(self, mutant: Mutant | None) -> None:
        tree = _tree(mutant.applied(self.source)) if mutant is not None else None
        if mutant is not None and tree is not None and tree not in self.seen:
            self.seen.add(tree)
            self.mutants.append(mutant)
            self.twins += 1
