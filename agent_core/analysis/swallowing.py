"""Changes that make tests pass by doing less: code that swallows exceptions, and early returns.

Pure functions over (original source, changed source), used wherever a change
could be reported fixed (the search's candidates, the coder's change, a patch
verified for another agent):

- `swallowing_findings`: what the change adds that swallows exceptions raised
  through it, the failing test's own `AssertionError` among them: a `return`,
  `break` or `continue` in a `finally:` (it discards the exception in flight),
  an `__exit__`/`__aexit__` that returns a true constant (the `with` block's
  exception is suppressed), a broad handler (`except:`, `except Exception`,
  `except BaseException`) that does not raise again and would catch the failing
  tests' exception types. Such a change is refused: green with it says nothing.
- `early_return`: a change that only adds `return`/`return None` guards to a
  function (`if x is None: return`) and leaves the rest as it was. Any test
  that only checks that nothing raises passes with it, and the function then
  does nothing on that path: a candidate to rank below one that keeps the
  function working (a default assigned, a value converted), and to name when
  it is the only green one.

Counted per function (its qualified name): a change that moves code keeps its
count, one that adds such a construct to a function raises it.

- `assertion_helpers`: the functions of a module whose own body fails a test when
  a check does not hold (a unittest `self.assertEqual`-style call, `pytest.fail`,
  `raise AssertionError` in a function named `assert...`): the checks a project
  ships for its tests (`pyparsing.testing`'s `assertParseAndCheckList`, a
  `numpy.testing`-style `assert_*`). A change inside one weakens the tests'
  check: green with it says nothing about the code (the search made a real
  pyparsing bug's test pass by putting an `assertEqual` of such a helper under
  an `if`); `weakened_checks` finds such changes.
"""

from __future__ import annotations

import ast
import builtins
import re
from collections.abc import Iterable, Iterator

from agent_core.analysis import pysyntax

REFUSED = "refused: it makes the tests pass by swallowing their errors"
FINALLY_EXIT = ("`{kind}` in a `finally:` discards any exception raised in its `try`, the tests' own assertions "
                "among them: a test passes whatever the code does")
EXIT_TRUE = ("`{name}` returns True: every exception raised in the `with` block is suppressed, the tests' own "
             "assertions among them")
BROAD = ("a broad `{handler}` that does not raise again swallows {types}: the failing test passes because its "
         "error is hidden, not fixed")
WEAKENS_CHECK = ("changes `{name}`, which the tests check with (it calls `{how}`): a change there weakens their "
                 "check, it does not fix the code")
EARLY_RETURN = ("only adds an early `return` to `{function}`: the function does nothing on that path, which "
                "passes a test that only checks that nothing raises")
_BROAD_NAMES = frozenset({"Exception", "BaseException"})
_NOT_EXCEPTIONS = frozenset({"Failed", "Skipped", "Exit", "OutcomeException", "XFailed"})  # pytest's BaseExceptions
_SCOPES = (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda)
_LOOPS = (ast.For, ast.AsyncFor, ast.While)
_UNITTEST_ASSERT = re.compile(r"assert[A-Z]")  # assertEqual, assertRaises: unittest's TestCase API


def _parse(text: str) -> ast.Module | None:
    try:
        return pysyntax.parse(text)
    except (SyntaxError, ValueError):
        return None


def _scoped(tree: ast.AST) -> Iterator[tuple[str, ast.AST]]:
    """(qualified name, node) of every function and class, the module as "" (one walk: a function nested in a
    statement of its scope, an `if` or a `try`, is named after the scope)."""
    stack: list[tuple[str, ast.AST]] = [("", tree)]
    while stack:
        name, node = stack.pop()
        yield name, node
        for child in _own_nodes(node):
            if isinstance(child, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
                stack.append((f"{name}.{child.name}".lstrip("."), child))


def _own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """The nodes of `scope` outside any nested function, class or lambda (those included, not entered)."""
    todo = list(ast.iter_child_nodes(scope))
    while todo:
        node = todo.pop()
        yield node
        if not isinstance(node, _SCOPES):
            todo.extend(ast.iter_child_nodes(node))


def _exits_in_finally(scope: ast.AST) -> Iterator[tuple[int, str]]:
    for node in _own_nodes(scope):
        for statement in getattr(node, "finalbody", None) or []:  # try, and 3.11's try/except*
            yield from _exits(statement, in_loop=False)


def _exits(node: ast.AST, in_loop: bool) -> Iterator[tuple[int, str]]:
    if isinstance(node, _SCOPES):
        return
    if isinstance(node, ast.Return):
        yield node.lineno, FINALLY_EXIT.format(kind="return")
    elif isinstance(node, (ast.Break, ast.Continue)) and not in_loop:
        yield node.lineno, FINALLY_EXIT.format(kind=type(node).__name__.lower())
    for child in ast.iter_child_nodes(node):
        yield from _exits(child, in_loop or isinstance(node, _LOOPS))


def _exit_true(scope: ast.AST) -> Iterator[tuple[int, str]]:
    if not isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)) or scope.name not in ("__exit__", "__aexit__"):
        return
    for node in _own_nodes(scope):
        if isinstance(node, ast.Return) and isinstance(node.value, ast.Constant) and node.value.value:
            yield node.lineno, EXIT_TRUE.format(name=scope.name)


def _handler_names(handler: ast.ExceptHandler) -> list[str]:
    kinds = handler.type.elts if isinstance(handler.type, ast.Tuple) else [handler.type]
    return [k.attr if isinstance(k, ast.Attribute) else k.id if isinstance(k, ast.Name) else "?" for k in kinds
            if k is not None]


def _catches(caught: list[str], kind: str) -> bool:
    """Whether a handler naming `caught` (empty: bare) catches an exception whose type is named `kind`."""
    if not caught or "BaseException" in caught:
        return True
    known = getattr(builtins, kind, None)
    if isinstance(known, type) and issubclass(known, BaseException):
        return issubclass(known, Exception)
    return kind not in _NOT_EXCEPTIONS  # a project's own exception class: an Exception, as nearly all are


def _broad(scope: ast.AST, types: list[str]) -> Iterator[tuple[int, str]]:
    for node in _own_nodes(scope):
        if not isinstance(node, ast.ExceptHandler):
            continue
        caught = _handler_names(node)
        if caught and not _BROAD_NAMES & set(caught):
            continue
        if any(isinstance(n, ast.Raise) for s in node.body for n in [s, *_own_nodes(s)]):
            continue
        swallowed = [kind for kind in types if _catches(caught, kind)] if types else ["any exception"]
        if swallowed:
            handler = f"except {', '.join(caught)}:" if caught else "except:"
            yield node.lineno, BROAD.format(handler=handler, types=", ".join(dict.fromkeys(swallowed)))


def _findings(text: str, types: list[str]) -> dict[tuple[str, str], list[int]]:
    tree = _parse(text)
    found: dict[tuple[str, str], list[int]] = {}
    if tree is None:
        return found
    for name, scope in _scoped(tree):
        for line, why in [*_exits_in_finally(scope), *_exit_true(scope), *_broad(scope, types)]:
            found.setdefault((name, why), []).append(line)
    return found


def swallowing_findings(original: str, changed: str, types: Iterable[str] = ()) -> list[tuple[int, str]]:
    """(line in `changed`, why) for each construct `changed` adds that swallows exceptions (module docstring);
    `types` are the failing tests' exception type names (none known: any broad handler counts)."""
    kinds = sorted(set(types))
    before, after = _findings(original, kinds), _findings(changed, kinds)
    out = []
    for key, lines in after.items():
        extra = len(lines) - len(before.get(key, []))
        out += [(line, key[1]) for line in lines[len(lines) - extra:]] if extra > 0 else []
    return sorted(out)


def _fails_a_test(node: ast.AST, function: str) -> str | None:
    """What in `node` (of the function named `function`) fails a test when a check does not hold: a unittest
    assertion method called on `self` (`self.assertEqual`: `assert` and a capital), `pytest.fail`, or, in a
    function named `assert...`, `raise AssertionError`; None for anything else. A library's own `self.fail`
    (jinja2's parser, click's types) raises its own error, and a bare `raise AssertionError` is often an
    internal invariant (jinja2's `subparse`): neither makes a function a check."""
    if isinstance(node, ast.Raise) and node.exc is not None and function.lower().startswith("assert"):
        raised = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        if isinstance(raised, ast.Name) and raised.id == "AssertionError":
            return "raise AssertionError"
    if isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and isinstance(node.func.value, ast.Name):
        owner, attr = node.func.value.id, node.func.attr
        if owner in ("self", "cls") and _UNITTEST_ASSERT.match(attr):
            return f"{owner}.{attr}"
        if owner == "pytest" and attr == "fail":
            return "pytest.fail"
    return None


def assertion_helpers(tree: ast.AST) -> list[tuple[int, int, str, str]]:
    """(first line, last line, qualified name, the call that fails a test) of each function in `tree` whose own
    body (not a nested function's) fails a test when a check does not hold (module docstring)."""
    found = []
    for name, scope in _scoped(tree):
        if isinstance(scope, (ast.FunctionDef, ast.AsyncFunctionDef)):
            hows = sorted((node.lineno, node.col_offset, why) for node in _own_nodes(scope)  # type: ignore[attr-defined]
                          if (why := _fails_a_test(node, scope.name)))
            if hows:  # named by the first in the source
                found.append((scope.lineno, scope.end_lineno or scope.lineno, name, hows[0][2]))
    return sorted(found)


def weakened_checks(original: str, changed: str) -> list[tuple[int, str]]:
    """(line in `changed`, why) for each assertion helper of `original` (`assertion_helpers`) that `changed`
    alters or removes (compared as syntax trees, by qualified name)."""
    before, after = _parse(original), _parse(changed)
    if before is None:
        return []
    helpers = assertion_helpers(before)
    if not helpers:
        return []
    now = {name: node for name, node in _scoped(after)} if after is not None else {}
    was = {name: node for name, node in _scoped(before)}
    out = []
    for _, _, name, how in helpers:
        new = now.get(name)
        if new is None or ast.dump(new) != ast.dump(was[name]):
            out.append((getattr(new, "lineno", 1), WEAKENS_CHECK.format(name=name, how=how)))
    return sorted(out)


def _guard(node: ast.stmt) -> bool:
    """`return`, `return None`, or an `if` (no `else`) whose body is only that."""
    if isinstance(node, ast.Return):
        return node.value is None or (isinstance(node.value, ast.Constant) and node.value.value is None)
    return (isinstance(node, ast.If) and not node.orelse and len(node.body) == 1
            and isinstance(node.body[0], ast.Return) and _guard(node.body[0]))


class _Unguarded(ast.NodeTransformer):
    """Drops early-return guards (`_guard`) that are not a block's only statement, counting them."""

    def __init__(self) -> None:
        self.dropped = 0
        self.first = 0

    def generic_visit(self, node: ast.AST) -> ast.AST:
        for field in ("body", "orelse", "finalbody"):
            block = getattr(node, field, None)
            if isinstance(block, list) and len(block) > 1 and all(isinstance(s, ast.stmt) for s in block):
                kept = [s for s in block[:-1] if not _guard(s)] + block[-1:]
                self.dropped += len(block) - len(kept)
                if len(kept) < len(block) and not self.first:
                    self.first = next(s.lineno for s in block if _guard(s))
                setattr(node, field, kept)
        return super().generic_visit(node)


def _functions(tree: ast.Module) -> dict[str, ast.AST]:
    return {name: node for name, node in _scoped(tree) if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef))}


def early_return(original: str, changed: str) -> tuple[int, str] | None:
    """(line in `changed`, why) when the change's only effect on some function is one or more added early
    `return`/`return None` guards (module docstring); None otherwise."""
    before, after = _parse(original), _parse(changed)
    if before is None or after is None:
        return None
    old = _functions(before)
    for name, node in _functions(after).items():
        if name not in old or ast.dump(node) == ast.dump(old[name]):
            continue
        new_view, old_view = _Unguarded(), _Unguarded()
        same = ast.dump(new_view.visit(node)) == ast.dump(old_view.visit(old[name]))
        if same and new_view.dropped > old_view.dropped:
            return new_view.first, EARLY_RETURN.format(function=name)
    return None
