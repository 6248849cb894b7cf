"""What the failing tests say beyond their tracebacks: the inputs they build and the exceptions they hit.

`failing_inputs` reads a report's failures and the failing test functions' source once and keeps what the
templates use as evidence: the punctuation and letters of the tests' string literals, their words as written,
the attributes read on None, the wrong types, the undefined names, the empty collections they write, whether
a coroutine was left unawaited, and where the tests crashed in the workspace's code.
"""

from __future__ import annotations

import ast
import re
from collections import Counter
from dataclasses import dataclass
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.models import TestFailure, TestReport
from agent_core.search.evidence.spectrum import workspace_frames
from agent_core.workspace.shadow import read_exact

MAX_CHARACTERS = 2  # characters taken from the failing tests (their candidates are tried first: templates/table.py)
MAX_LETTERS = 4  # letters beyond ASCII taken from the failing tests (a regular expression's class may miss them)
_WORD = re.compile(r"[^\W\d_]{2,}")
_BRACED = re.compile(r"\{[A-Za-z_][\w.]*\}")
MAX_CRASH_SITES = 4  # workspace frames kept of the tests that failed with an exception
# an exception's name at the start of a line of a failure's message or traceback (`E   pkg.errors.ParseError: ...`)
EXCEPTION_NAME = re.compile(r"^(?:E\s+)?(?:[\w.]+\.)?([A-Z]\w*(?:Error|Exception|Iteration))\b", re.MULTILINE)
_NONE_ATTRIBUTE = re.compile(r"'NoneType' object has no attribute '(\w+)'")
_WRONG_TYPE = re.compile(r"'(\w+)' object has no attribute '(\w+)'")
_UNDEFINED = re.compile(r"name '(\w+)' is not defined")
_NONE = re.compile(r"\bNone(Type)?\b")
_COROUTINE = re.compile(r"\bcoroutine\b")


def _test_function(tree: ast.Module, nodeid: str) -> ast.AST:
    """The test function a node id names (its last part, before a parametrization), or the whole module."""
    name = nodeid.split("::")[-1].split("[", 1)[0]
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name == name:
            return node
    return tree


@dataclass(frozen=True)
class FailingInputs:
    """What the failing tests' inputs are made of (their string literals, parametrizations and messages): what
    the code under test may not expect."""

    characters: tuple[str, ...] = ()  # punctuation, the MAX_CHARACTERS most frequent first
    letters: tuple[str, ...] = ()  # letters beyond ASCII, at most MAX_LETTERS (literals.regex_class_edits)
    words: frozenset[str] = frozenset()  # their words as written (case_edits: `create` against 'CREATE')
    braced: frozenset[str] = frozenset()  # `{name}` as their messages show it (literals.missing_f_edits)
    none_attributes: frozenset[str] = frozenset()  # `x` of "'NoneType' object has no attribute 'x'" (guards)
    undefined: frozenset[str] = frozenset()  # `x` of "name 'x' is not defined" (missing.py)
    coroutine: bool = False  # a failing message shows a coroutine object, never awaited (missing.py)
    # where tests failed with an exception (not an assertion): the innermost workspace frame and its caller,
    # (file, line), innermost first (templates/table.py makes its templates there, whatever the ranking says)
    crash_sites: tuple[tuple[str, int], ...] = ()
    # (T, x) of "'T' object has no attribute 'x'", T not NoneType: a value a type test let through (retype.py)
    wrong_types: frozenset[tuple[str, str]] = frozenset()
    # the empty collections the failing test functions write (`()`, `[]`, `{}`), in order: a value they expect
    # where the code gives another kind (refusals.py)
    empties: tuple[str, ...] = ()
    nones: bool = False  # a failing message shows None as a value (`assert None == [...]`, `'NoneType' object ...`)


NO_INPUTS = FailingInputs()


def failing_inputs(report: TestReport | None, root: Path) -> FailingInputs:
    """The FailingInputs of `report`'s failing tests, read from their test functions under `root`."""
    texts = _failing_texts(report, root)
    counts: Counter[str] = Counter(c for text in texts for c in set(text)
                                   if not (c.isalnum() or c.isspace() or c == "_"))
    letters = dict.fromkeys(c for text in texts for c in text if c.isalpha() and not c.isascii())
    messages = [f.message for f in report.failures] if report is not None else []
    return FailingInputs(tuple(c for c, _ in counts.most_common(MAX_CHARACTERS)), tuple(letters)[:MAX_LETTERS],
                         frozenset(w for text in texts for w in _WORD.findall(text)),
                         frozenset(b for text in messages for b in _BRACED.findall(text)),
                         frozenset(a for text in messages for a in _NONE_ATTRIBUTE.findall(text)),
                         frozenset(n for text in messages for n in _UNDEFINED.findall(text)),
                         any(_COROUTINE.search(text) for text in messages), _crash_sites(report, root),
                         frozenset(found for text in messages for found in _WRONG_TYPE.findall(text)
                                   if found[0] != "NoneType"), _empties(report, root),
                         any(_NONE.search(text) for text in messages))


def crashed(message: str) -> bool:
    """Whether a failure's message is an exception the code raised (`KeyError: 'x'`), not an assertion."""
    found = EXCEPTION_NAME.match(message.lstrip())
    return found is not None and found.group(1) != "AssertionError"


def _crash_sites(report: TestReport | None, root: Path) -> tuple[tuple[str, int], ...]:
    """The innermost workspace frame of each test that failed with an exception, and the frame that called it
    (a caller passes the bad value as often as the callee mishandles it)."""
    sites: list[tuple[str, int]] = []
    for failure in report.failures if report is not None else []:
        if crashed(failure.message):
            sites += [(f.path, f.line) for f in reversed(workspace_frames(failure, root)[-2:])]
    return tuple(dict.fromkeys(sites))[:MAX_CRASH_SITES]


def _failing_functions(report: TestReport | None, root: Path) -> list[tuple[TestFailure, ast.AST | None]]:
    """Each failing test with its test function (the whole module when the function is not found; None when
    its file cannot be read or parsed)."""
    out: list[tuple[TestFailure, ast.AST | None]] = []
    trees: dict[str, ast.Module | None] = {}
    for failure in report.failures if report is not None else []:
        if failure.file not in trees:
            try:
                trees[failure.file] = pysyntax.parse(read_exact(root / failure.file))
            except (OSError, UnicodeDecodeError, SyntaxError, ValueError):
                trees[failure.file] = None
        tree = trees[failure.file]
        out.append((failure, _test_function(tree, failure.nodeid) if tree is not None else None))
    return out


def _empties(report: TestReport | None, root: Path) -> tuple[str, ...]:
    """The empty collection displays of the failing test functions, as written, in the order they come."""
    found: list[tuple[int, int, str]] = []
    for _, function in _failing_functions(report, root):
        if function is None or isinstance(function, ast.Module):
            continue
        for node in ast.walk(function):
            members = node.keys if isinstance(node, ast.Dict) else getattr(node, "elts", None)
            if isinstance(node, (ast.Tuple, ast.List, ast.Dict)) and not members:
                found.append((node.lineno, node.col_offset, ast.unparse(node)))
    return tuple(dict.fromkeys(text for _, _, text in sorted(found)))


def failing_literals(report: TestReport | None, root: Path) -> frozenset[tuple[str, object]]:
    """The constants the failing test functions write (their inputs and expected values, parametrizations
    too), each as (type name, value) so that `1` and `True` stay apart."""
    found: set[tuple[str, object]] = set()
    for _, function in _failing_functions(report, root):
        if function is not None and not isinstance(function, ast.Module):  # a whole module says nothing of one test
            found |= {literal(n) for n in ast.walk(function) if isinstance(n, ast.Constant)}
    return frozenset(found)


def literal(node: ast.Constant) -> tuple[str, object]:
    """A constant as failing_literals keeps it; a negative number (`-1`, a unary minus) is the caller's to fold."""
    return type(node.value).__name__, node.value


def _failing_texts(report: TestReport | None, root: Path) -> list[str]:
    """The failing tests' messages and the string literals of their test functions (parametrizations too)."""
    texts: list[str] = []
    for failure, function in _failing_functions(report, root):
        texts.append(failure.message)
        if function is not None:
            texts += [n.value for n in ast.walk(function) if isinstance(n, ast.Constant) and isinstance(n.value, str)]
    return texts


MAX_EXCEPTIONS = 2  # exception types of the failing tests the templates catch or translate


def seen_exceptions(report: TestReport | None) -> list[str]:
    """The exception types the failing tests raised (the message's or the traceback's `IndexError: ...`), most
    frequent first; not AssertionError (an assertion of the test, not a raise a `try` would catch)."""
    counts: dict[str, int] = {}
    for failure in report.failures if report is not None else []:
        names = EXCEPTION_NAME.findall(failure.message) or EXCEPTION_NAME.findall(failure.traceback)[-1:]
        for name in dict.fromkeys(names):
            if name != "AssertionError":
                counts[name] = counts.get(name, 0) + 1
    return sorted(counts, key=lambda n: -counts[n])[:MAX_EXCEPTIONS]


def failing_types(report: TestReport | None) -> list[str]:
    """The exception types of the failing tests: the ones they raised, and their own assertions' (what no change
    may swallow: search/driver/screen.py, pipeline/safety/swallows.py)."""
    return [*seen_exceptions(report), "AssertionError"]
