"""Fault localization: which functions and lines of the workspace the failing tests point at.

Spectrum-based: every executed line of a non-test workspace file is scored with
Ochiai, `failed(line) / sqrt(total_failed * (failed(line) + passed(line)))`,
from per-test coverage (one coverage context per test, collected in the
sandbox by driver_script.py), plus a bonus for a line that every one of two or
more failing tests ran (one bug behind several failures is on a line they all
run; a line where only some of them crash is more often where the bug shows
than where it is: a bad value made upstream). Lines in the failing tests' tracebacks are
boosted (the innermost workspace frame most), and are the only evidence when
coverage could not be collected (not pytest, no coverage.py, a crash). Lines
are grouped into their enclosing function (tree-sitter, agent_core.analysis);
a function scores as its best line. Code that only reports an error (an
exception class, a helper that ends by raising) scores half: below the code
that decided to raise. A function the failing tests call by name
(evidence/called.py) that ranked below the first MAX_SUSPECTS comes in after
them (at most CALLED_EXTRA of them), and every called suspect is marked
`called`: the model's holes go there first (driver/interleave.py), the
search's own candidates keep the spectrum's order.
"""

from __future__ import annotations

import ast
import math
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.analysis.symbols import Symbol, analyse
from agent_core.models import TestFailure, TestReport
from agent_core.testing.junit import Frame, traceback_frames
from agent_core.workspace.testfiles import is_protected

INNERMOST_BOOST = 0.5  # the failing line named by a traceback's innermost workspace frame
CONDITION_SHARE = 0.99  # an if/while condition scores at least this share of the lines it governs
ALL_FAILING_BONUS = 1.0  # a line every failing test ran (two or more): one bug behind them all is there or later
# (Ochiai is at most 1: such lines come before the others unless heavily shared with passing tests while a
# crash site of some failing tests is not)
CONSTANT_SHARE = 0.5  # a module-level constant read by a suspicious line: below the line's own edits
CONSTANT_LINES = 10  # the lines of one constant's definition that may be suspects
REPORTING_SHARE = 0.5  # a line of code that only reports an error (reporting_spans): below the code that decided
_EXCEPTION_SUFFIXES = ("Error", "Exception", "Warning", "Exit", "Interrupt")
FRAME_BOOST = 0.25  # any other workspace frame of a failing test
MAX_SUSPECTS = 10
CALLED_EXTRA = 2  # suspects the failing tests call by name, let in after the first MAX_SUSPECTS
_CONSTRUCTORS = ("__init__", "__new__", "__post_init__")  # what calling a class by its name runs
LINES_KEPT = 10  # lines shown per suspect (the coder's marks, the journal, the trace)
LINES_SEARCHED = 40  # lines per suspect whose mutants the search may try (ties make the first ten arbitrary)

Coverage = dict[str, dict[str, list[int]]]  # rel_path -> {test nodeid: executed lines}
LineKey = tuple[str, int]


@dataclass
class Suspect:
    """A function (or a file's module-level code when `function` is "") and its most suspicious lines."""

    file: str
    function: str
    start_line: int
    end_line: int
    lines: list[int]
    score: float
    line_scores: list[float] = field(default_factory=list, repr=False)  # of `lines`, in order
    more_lines: list[tuple[int, float]] = field(default_factory=list, repr=False)  # the next ones, with scores
    called: bool = False  # a failing test calls this function by name (evidence/called.py)

    def as_dict(self) -> dict:
        """The state's and journal's form: file, function, start_line, end_line, lines, score (and `called`
        when a failing test calls it)."""
        return {k: v for k, v in asdict(self).items() if k not in ("line_scores", "more_lines")
                and (k != "called" or v)}

    def searched(self) -> list[tuple[int, float]]:
        """(line, score) of every line the search may mutate, best first."""
        scores = self.line_scores or [self.score] * len(self.lines)
        return [*zip(self.lines, scores, strict=True), *self.more_lines]


def ochiai(failed: int, passed: int, total_failed: int) -> float:
    """Ochiai suspiciousness of a line run by `failed` failing and `passed` passing tests."""
    if failed == 0 or total_failed == 0:
        return 0.0
    return failed / math.sqrt(total_failed * (failed + passed))


def is_candidate_file(rel: str) -> bool:
    """Workspace Python that a fix may change: not tests, conftest or agentls' own files."""
    return rel.endswith(".py") and not is_protected(rel) and not rel.startswith((".agentls/", "../"))


def coverage_scores(files: Coverage, outcomes: dict[str, str]) -> dict[LineKey, float]:
    """Ochiai per executed line of candidate files."""
    failing = {n for n, o in outcomes.items() if o in ("failed", "error")}
    scores: dict[LineKey, float] = {}
    for rel, per_test in files.items():
        if not is_candidate_file(rel):
            continue
        failed: dict[int, int] = defaultdict(int)
        passed: dict[int, int] = defaultdict(int)
        for nodeid, lines in per_test.items():
            if nodeid in failing or outcomes.get(nodeid) == "passed":  # skipped tests say nothing
                counter = failed if nodeid in failing else passed
                for line in lines:
                    counter[line] += 1
        for line in set(failed) | set(passed):
            score = ochiai(failed[line], passed[line], len(failing))
            if len(failing) >= 2 and failed[line] == len(failing):
                score += ALL_FAILING_BONUS
            if score > 0:
                scores[(rel, line)] = score
    return scores


def workspace_frames(failure: TestFailure, workspace: Path) -> list[Frame]:
    """The frames of a failure's traceback in the workspace's candidate files (not tests), outermost first."""
    return [f for f in traceback_frames(failure.traceback, workspace) if f.inside and is_candidate_file(f.path)]


def traceback_scores(report: TestReport, workspace: Path) -> dict[LineKey, float]:
    """Boosts for the candidate-file lines named in the failing tests' tracebacks."""
    boosts: dict[LineKey, float] = {}
    for failure in report.failures:
        keys = [(f.path, f.line) for f in workspace_frames(failure, workspace)]
        if failure.source_file and failure.source_line and is_candidate_file(failure.source_file):
            keys.append((failure.source_file, failure.source_line))
        for index, key in enumerate(keys):
            boost = INNERMOST_BOOST if index == len(keys) - 1 else FRAME_BOOST
            boosts[key] = max(boosts.get(key, 0.0), boost)
    return boosts


def combine(*parts: dict[LineKey, float]) -> dict[LineKey, float]:
    out: dict[LineKey, float] = defaultdict(float)
    for part in parts:
        for key, value in part.items():
            out[key] += value
    return dict(out)


def _functions(source: str) -> list[Symbol]:
    return [s for s in analyse(source).symbols if s.kind in ("function", "method")]


def _enclosing(functions: list[Symbol], line: int) -> Symbol | None:
    inside = [s for s in functions if s.start_line <= line <= s.end_line]
    return max(inside, key=lambda s: s.start_line) if inside else None


def enclosing_names(source: str) -> dict[int, str]:
    """Line -> the qualified name (`Class.method`, `Class` for its body's own lines) of the innermost function or
    class holding it; lines outside any are left out."""
    names: dict[int, str] = {}
    symbols = [s for s in analyse(source).symbols if s.kind in ("function", "method", "class")]
    for symbol in sorted(symbols, key=lambda s: s.start_line):  # an inner one's lines last
        names.update(dict.fromkeys(range(symbol.start_line, symbol.end_line + 1), symbol.qualname))
    return names


def governing(source: str) -> dict[int, int]:
    """Each line inside the body or `else` of an `if`/`while` -> the line of that condition (the innermost)."""
    out: dict[int, int] = {}
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return out
    for node in ast.walk(tree):  # outer statements come first: inner ones overwrite their lines
        if isinstance(node, (ast.If, ast.While)):
            for child in [*node.body, *node.orelse]:
                if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                    continue  # a def under `if sys.version_info ...`: its body runs later, ungoverned
                for line in range(child.lineno, (child.end_lineno or child.lineno) + 1):
                    out[line] = node.test.lineno
    return out


def _sources(scores: dict[LineKey, float], workspace: Path) -> Iterator[tuple[str, str]]:
    """(rel, text) of each file with a scored line, skipping one that cannot be read."""
    for rel in {rel for rel, _ in scores}:
        try:
            yield rel, (workspace / rel).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            continue


def with_conditions(scores: dict[LineKey, float], workspace: Path) -> dict[LineKey, float]:
    """Lift each `if`/`while` condition to just below the most suspicious line it governs: a branch only the
    failing tests take is as often the condition's fault (`>=` for `>`) as the branch's own."""
    out = dict(scores)
    for rel, source in _sources(scores, workspace):
        conditions = governing(source)
        for (file, line), score in scores.items():
            test = conditions.get(line) if file == rel else None
            if test is not None and test != line:
                out[(rel, test)] = max(out.get((rel, test), 0.0), score * CONDITION_SHARE)
    return out


def module_constants(source: str) -> tuple[dict[str, list[int]], dict[int, set[str]]]:
    """The module-level names assigned once (`LIMIT = 10`, `UNITS: dict = {...}`) -> the lines of their
    definition; and each line -> the names it reads."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return {}, {}
    assigned: dict[str, list[list[int]]] = defaultdict(list)
    for node in tree.body:
        targets = node.targets if isinstance(node, ast.Assign) else [node.target] if isinstance(
            node, ast.AnnAssign) and node.value is not None else []
        for target in targets:
            if isinstance(target, ast.Name):
                end = min(node.end_lineno or node.lineno, node.lineno + CONSTANT_LINES - 1)
                assigned[target.id].append(list(range(node.lineno, end + 1)))
    reads: dict[int, set[str]] = defaultdict(set)
    for name in ast.walk(tree):
        if isinstance(name, ast.Name) and isinstance(name.ctx, ast.Load) and name.id in assigned:
            reads[name.lineno].add(name.id)
    return {name: spans[0] for name, spans in assigned.items() if len(spans) == 1}, reads


def with_constants(scores: dict[LineKey, float], workspace: Path) -> dict[LineKey, float]:
    """Add the definitions of the module-level constants a suspicious line reads, at half its score: they run
    at import, outside every test's coverage, so a mistyped constant is otherwise never a suspect."""
    out = dict(scores)
    for rel, source in _sources(scores, workspace):
        constants, reads = module_constants(source)
        for (file, line), score in scores.items():
            for name in reads.get(line, ()) if file == rel else ():
                for defined in constants.get(name, []):
                    if defined != line:
                        out[(rel, defined)] = max(out.get((rel, defined), 0.0), score * CONSTANT_SHARE)
    return out


def _exception_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """The module's classes that are exceptions by their bases' names (`...Error`, `Exception`, a class of the
    module already found to be one), in any nesting."""
    classes = [node for node in ast.walk(tree) if isinstance(node, ast.ClassDef)]
    names: set[str] = set()
    while True:
        found = {c.name for c in classes for base in c.bases
                 if (base.id if isinstance(base, ast.Name) else base.attr if isinstance(base, ast.Attribute) else "")
                 .endswith(_EXCEPTION_SUFFIXES) or isinstance(base, ast.Name) and base.id in names}
        if found <= names:
            return [c for c in classes if c.name in names]
        names |= found


def _raises_only(node: ast.FunctionDef | ast.AsyncFunctionDef) -> bool:
    """Whether a function ends by raising and never returns: a helper that builds and raises the error its
    callers decided on (`def fail(self, msg): raise SyntaxError(msg, self.lineno)`)."""
    inner = [n for statement in node.body for n in ast.walk(statement)]
    return bool(node.body) and isinstance(node.body[-1], ast.Raise) and not any(
        isinstance(n, ast.Return | ast.Yield | ast.YieldFrom) for n in inner)


def reporting_spans(source: str) -> list[tuple[int, int]]:
    """(first, last) lines of the code that only reports an error: the exception classes' bodies and the
    functions that end by raising and never return.

    A test that checks an error (its type, its message) runs that code in the failing tests and, often, in few
    passing ones: the spectrum ranks it with the code that decided to raise, and the tie went to the file
    first in name order (in a real jinja2 bug, `exceptions.py`'s `__str__` and the parser's `fail` helper
    before the extension that failed to call it with the right message). The bug is where the decision is
    made far more often than in the plumbing that carries it."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return []
    spans = [(c.lineno, c.end_lineno or c.lineno) for c in _exception_classes(tree)]
    return spans + [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree)
                    if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef) and _raises_only(n)]


def with_reporting(scores: dict[LineKey, float], workspace: Path) -> dict[LineKey, float]:
    """Each line of the code that only reports an error (reporting_spans) at REPORTING_SHARE of its score."""
    out = dict(scores)
    for rel, source in _sources(scores, workspace):
        spans = reporting_spans(source)
        for (file, line), score in scores.items():
            if file == rel and any(first <= line <= last for first, last in spans):
                out[(rel, line)] = score * REPORTING_SHARE
    return out


def is_called(function: str, called: set[str] | frozenset[str]) -> bool:
    """Whether the function of qualified name `function` runs by a call of one of the names in `called`: its
    own name, or its class's for a constructor."""
    parts = function.split(".")
    return parts[-1] in called or len(parts) > 1 and parts[-1] in _CONSTRUCTORS and parts[-2] in called


def rank(scores: dict[LineKey, float], workspace: Path, limit: int = MAX_SUSPECTS,
         called: set[str] | frozenset[str] = frozenset()) -> list[Suspect]:
    """Lines grouped by enclosing function, best function first; lines best first (ties: file order).
    Conditions are lifted toward the lines they govern first (with_conditions), then the constants the
    suspicious lines read are added (with_constants), then the code that only reports an error is put below
    the rest (with_reporting). `called`: the names the failing tests call; the
    suspects they name are marked, and up to CALLED_EXTRA of them below the first `limit` come after those."""
    scores = with_reporting(with_constants(with_conditions(scores, workspace), workspace), workspace)
    by_file: dict[str, list[tuple[int, float]]] = defaultdict(list)
    for (rel, line), score in scores.items():
        by_file[rel].append((line, score))
    suspects: list[Suspect] = []
    for rel, lines in by_file.items():
        path = workspace / rel
        try:
            functions = _functions(path.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError):
            continue
        groups: dict[str, list[tuple[int, float]]] = defaultdict(list)
        spans: dict[str, tuple[int, int]] = {}
        for line, score in lines:
            symbol = _enclosing(functions, line)
            name = symbol.qualname if symbol else ""
            groups[name].append((line, score))
            spans[name] = (symbol.start_line, symbol.end_line) if symbol else (
                min(min(n for n, _ in groups[name]), spans.get(name, (line, line))[0]),
                max(max(n for n, _ in groups[name]), spans.get(name, (line, line))[1]))
        for name, members in groups.items():
            ordered = sorted(members, key=lambda item: (-item[1], item[0]))
            start, end = spans[name]
            kept = ordered[:LINES_KEPT]
            suspects.append(Suspect(rel, name, start, end, [n for n, _ in kept], round(ordered[0][1], 4),
                                    [round(v, 4) for _, v in kept],
                                    [(n, round(v, 4)) for n, v in ordered[LINES_KEPT:LINES_SEARCHED]]))
    suspects.sort(key=lambda s: (-s.score, s.file, s.start_line))
    for suspect in suspects:
        suspect.called = bool(suspect.function) and is_called(suspect.function, called)
    return suspects[:limit] + [s for s in suspects[limit:] if s.called][:CALLED_EXTRA]
