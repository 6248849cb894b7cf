"""Judging a generated test that runs but fails: test-side error, suspected code bug, or a wrong test.

`classify` reads the failure (deterministic). `docstring_check` compares the
failing assertion (the one on the failure's line; a passing assertion of the
same test says nothing about the failure) with the docstring's doctest
examples: agreeing with an example means the code contradicts its own
documentation (a bug); disagreeing means the test is wrong. Anything else is
left to the model's typed verdict.
"""

from __future__ import annotations

import ast
import doctest
import re
import textwrap
from typing import Literal

from agent_core.analysis import pysyntax
from agent_core.models import TestFailure

_TEST_SIDE = re.compile(
    r"\b(ImportError|ModuleNotFoundError|NameError|SyntaxError|IndentationError|UnboundLocalError)\b"
    r"|fixture '[^']+' not found"
    r"|collection error"
    r"|TypeError: .*(positional argument|required positional|unexpected keyword|keyword argument|takes \d+|"
    r"missing \d+ required|got multiple values)"
    r"|AttributeError: module '[^']+' has no attribute"
    r"|AttributeError: type object '[^']+' has no attribute"
)

# A lazy iterator's repr (pytest may cut its middle: `<generator ob...x7f05a30b4700>`) compared with a list or
# tuple: the test forgot `list(...)`, whatever the code computes; the test is repaired, never kept as a bug.
_LAZY = r"<(?:generator|map|filter|zip|enumerate|reversed|itertools\.\w+|\w*iterator) ob[^>]*x[0-9a-f]+>"
_LAZY_COMPARED = re.compile(rf"\bassert (?:{_LAZY} [=!]= [\[(]|.*[\])] [=!]= {_LAZY})")
LAZY_HINT = "The code returns a lazy iterator: compare list(...) of it with the expected list."
# `pytest.raises` around a call that never ran the target module's code (a generator function's body runs
# only when iterated): nothing the code does can have raised, so the test, not the code, is at fault.
NOT_RUN_HINT = ("The code under test never ran inside pytest.raises: a generator function runs only when "
                "iterated; call list(...) of it inside the `with` block.")

Outcome = Literal["test_error", "fails"]


def _raised_nothing_unrun(failure: TestFailure, ran_target: bool) -> bool:
    return not ran_target and "DID NOT RAISE" in failure.message


def _own_nodes(fn: ast.AST) -> list[ast.AST]:
    """The nodes of a function's own body (nested functions, lambdas and classes left out)."""
    out, todo = [], list(ast.iter_child_nodes(fn))
    while todo:
        node = todo.pop()
        out.append(node)
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.Lambda, ast.ClassDef)):
            todo.extend(ast.iter_child_nodes(node))
    return out


def generator_body_ran(source: str, first_line: int, last_line: int | None) -> bool:
    """False when `source` (a definition starting at `first_line`) is a generator function and the test's last
    return from the module (`last_line`, None: none) is only the generator's creation, at its `def` line:
    calling a generator function runs none of its body. True otherwise (unknown counts as ran)."""
    try:
        tree = pysyntax.parse(textwrap.dedent(source))
    except SyntaxError:
        return True
    fn = tree.body[0] if tree.body else None
    if not isinstance(fn, (ast.FunctionDef, ast.AsyncFunctionDef)):
        return True
    if not any(isinstance(n, (ast.Yield, ast.YieldFrom)) for n in _own_nodes(fn)):
        return True
    return last_line is not None and last_line != first_line + fn.lineno - 1


def classify(failure: TestFailure | None, collect_error: str | None = None, ran_target: bool = True) -> Outcome:
    """'test_error' when the test cannot run for a test-side reason, else 'fails' (runs, fails).

    `ran_target` False: the test never executed the target module's code (then a `DID NOT RAISE` is the
    test's fault).
    """
    if collect_error is not None:
        return "test_error"
    if failure is None:
        return "test_error"
    if failure.kind == "error" or _raised_nothing_unrun(failure, ran_target):
        return "test_error"
    text = f"{failure.message}\n{failure.traceback[-1500:]}"
    last_error = [line for line in text.splitlines() if line.startswith("E ")][-3:]
    probe = "\n".join(last_error) or failure.message
    if any(pattern.search(probe) or pattern.search(failure.message) for pattern in (_TEST_SIDE, _LAZY_COMPARED)):
        return "test_error"
    return "fails"


def repair_hint(failure: TestFailure | None, ran_target: bool = True) -> str:
    """A line for the repair request when the failure is a known test-side mistake, else ''."""
    if failure is None:
        return ""
    if _raised_nothing_unrun(failure, ran_target):
        return NOT_RUN_HINT
    return LAZY_HINT if _LAZY_COMPARED.search(f"{failure.message}\n{failure.traceback[-1500:]}") else ""


def _norm(source: str) -> str | None:
    try:
        return ast.unparse(pysyntax.parse_expression(source.strip()))
    except SyntaxError:
        return None


def _literal(source: str) -> tuple[bool, object]:
    try:
        return True, pysyntax.literal_eval(source.strip())
    except (ValueError, SyntaxError):
        return False, None


def _assertions(test_code: str, line: int | None = None) -> list[tuple[str, str]]:
    """(call, expected) pairs of `assert CALL == EXPECTED` (either side order) in the test; with `line`,
    only the assertion spanning that line."""
    try:
        tree = pysyntax.parse(test_code)
    except SyntaxError:
        return []
    pairs = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Assert) and isinstance(node.test, ast.Compare) and len(node.test.ops) == 1 \
                and isinstance(node.test.ops[0], ast.Eq):
            if line is not None and not node.lineno <= line <= (node.end_lineno or node.lineno):
                continue
            left, right = node.test.left, node.test.comparators[0]
            if isinstance(right, ast.Call) and not isinstance(left, ast.Call):
                left, right = right, left
            pairs.append((ast.unparse(left), ast.unparse(right)))
    return pairs


def docstring_check(docstring: str | None, test_code: str,
                    failing_line: int | None = None) -> Literal["code_bug", "test_wrong"] | None:
    """A verdict from the docstring's doctest examples, or None when they say nothing about this test.

    `failing_line` (1-based in `test_code`): only the assertion on it is judged; None: every assertion.
    """
    if not docstring:
        return None
    try:
        examples = doctest.DocTestParser().get_examples(docstring)
    except ValueError:
        return None
    documented = {}
    for example in examples:
        key = _norm(example.source)
        ok, value = _literal(example.want)
        if key and ok:
            documented[key] = value
    for call, expected in _assertions(test_code, failing_line):
        key = _norm(call)
        ok, value = _literal(expected)
        if key in documented and ok:
            return "code_bug" if documented[key] == value else "test_wrong"
    return None


def failure_summary(failure: TestFailure) -> str:
    """A short text of a failure for the model and for the marker comment."""
    lines = [line[1:].strip() for line in failure.traceback.splitlines() if line.startswith("E ")]
    return "\n".join(lines[:6]) or failure.message
