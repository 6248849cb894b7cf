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
# a view or lazy iterator indexed or measured (templates/conversions.py)
_LAZY = re.compile(r"'(\w+)' object is not subscriptable|object of type '(\w+)' has no len\(\)")
_JOINED = re.compile(r"sequence item \d+: expected str instance")
_BYTES_SHOWN = re.compile(r"""(?:^|(?<=[\s(\[{,=:"]))b(?:'[^'\n]*'|"[^"\n]*")""")
_UNPACKED = re.compile(r"(?:too many|not enough) values to unpack|cannot unpack non-iterable")
_CONCATENATED = re.compile(r"can only concatenate str \(not|must be str, not \w+|unsupported operand type\(s\) for "
                           r"\+=?: '\w+' and 'str'")
_UNBOUND_LOCAL = re.compile(r"local variable '(\w+)' referenced before assignment|cannot access local variable "
                            r"'(\w+)'")
# a method read where its value was meant (a property not declared), or a value called (a property called)
_METHOD_VALUE = re.compile(r"<bound method [\w.]+ of |'method'")
_NOT_CALLABLE = re.compile(r"'(\w+)' object is not callable")
_EMPTIED = re.compile(r"(?:max|min)\(\) (?:arg is an empty sequence|iterable argument is empty)")
# text where bytes were wanted (a file opened as text whose contents are hashed, sent, or compared with bytes)
_BYTES_WANTED = re.compile(r"Strings must be encoded before hashing|Unicode-objects must be encoded|a bytes-like "
                           r"object is required, not 'str'|UnicodeDecodeError")
# a file object where text was expected, or text where a file was (`json.loads(handle)`, `json.load(text)`)
_FILES = re.compile(r"TextIOWrapper|Buffered(?:Reader|Writer|Random)|StringIO|BytesIO|'(?:str|bytes)' object has "
                    r"no attribute '(?:read|write)'|required positional argument: 'fp'")


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
    # the types "'T' object is not subscriptable" or "object of type 'T' has no len()" names (conversions.py)
    unsubscriptable: frozenset[str] = frozenset()
    joined: bool = False  # `str.join` met a value that is not text ("sequence item 0: expected str instance")
    bytes_shown: bool = False  # a failing message shows a bytes literal (`b'YTpi'`): str() of bytes
    files: bool = False  # a message shows a file object where text was expected, or the other way round
    unpacking: bool = False  # "not enough values to unpack": a mapping walked for its pairs (conversions.py)
    concatenated: bool = False  # text `+` a value that is not text (conversions.py)
    unbound_locals: frozenset[str] = frozenset()  # names UnboundLocalError named (missing.global_edits)
    method_values: bool = False  # a bound method where its value was meant (classes.property_edits)
    not_callable: bool = False  # "'int' object is not callable": a value called (classes.uncall_edits)
    emptied: bool = False  # "max() arg is an empty sequence" (missing.empty_edits)
    bytes_wanted: bool = False  # text where bytes were wanted (conversions.binary_edits)


NO_INPUTS = FailingInputs()


def failing_inputs(report: TestReport | None, root: Path) -> FailingInputs:
    """The FailingInputs of `report`'s failing tests, read from their test functions under `root`."""
    texts = _failing_texts(report, root)
    counts: Counter[str] = Counter(c for text in texts for c in set(text)
                                   if not (c.isalnum() or c.isspace() or c == "_"))
    letters = dict.fromkeys(c for text in texts for c in text if c.isalpha() and not c.isascii())
    messages = [f.message for f in report.failures] if report is not None else []
    def shown(pattern: re.Pattern[str]) -> bool:
        return any(pattern.search(text) for text in messages)

    def named(pattern: re.Pattern[str]) -> frozenset[str]:  # a pattern's groups, whichever of them matched
        return frozenset(n for text in messages for found in pattern.findall(text)
                         for n in (found if isinstance(found, tuple) else (found,)) if n)

    return FailingInputs(
        characters=tuple(c for c, _ in counts.most_common(MAX_CHARACTERS)), letters=tuple(letters)[:MAX_LETTERS],
        words=frozenset(w for text in texts for w in _WORD.findall(text)), braced=named(_BRACED),
        none_attributes=named(_NONE_ATTRIBUTE), undefined=named(_UNDEFINED), coroutine=shown(_COROUTINE),
        crash_sites=_crash_sites(report, root),
        wrong_types=frozenset(found for text in messages for found in _WRONG_TYPE.findall(text)
                              if found[0] != "NoneType"),
        empties=_empties(report, root), nones=shown(_NONE), unsubscriptable=named(_LAZY), joined=shown(_JOINED),
        bytes_shown=shown(_BYTES_SHOWN), files=shown(_FILES), unpacking=shown(_UNPACKED),
        concatenated=shown(_CONCATENATED), unbound_locals=named(_UNBOUND_LOCAL), method_values=shown(_METHOD_VALUE),
        not_callable=shown(_NOT_CALLABLE), emptied=shown(_EMPTIED), bytes_wanted=shown(_BYTES_WANTED))


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
