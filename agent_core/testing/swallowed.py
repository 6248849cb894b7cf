"""Swallowed assertions: a test that passes although its own assertion raised is not a pass.

A test's `assert` (an `AssertionError`, also from a helper it calls or a
`unittest` assert method) or its `pytest.fail` raises through the test
function's frame. When the test still returns normally, something caught it:
the test's own `except`, a `pytest.raises` the test wrote (both fine), or the
code under test: a `with` whose `__exit__` returned true (a `return` in the
`finally:` of a `@contextmanager`, a broad `except` in an `__exit__`), or a
wrapper around the test function. The last kind is reported as a failure.

`Watch` sees the exceptions that pass through one code object's frames, cheaply:
with `sys.monitoring` (3.12+) a RAISE callback that compares one code object;
before 3.12 `sys.settrace` only until the test's frame starts, whose `f_trace`
then gets the exception events while a C builtin (`getattr`, which answers
None to every call event) stays the global tracer. A thread already traced (a
debugger, coverage.py's tracer before 3.12) is not watched. `why_swallowed`
reads the test function's source (`ast`) to tell who caught each exception,
and `plugin(pytest)` is the pytest plugin that turns such a test into a
failure naming the assertion and the `with` that swallowed it.

Runs under the project's interpreter, beside agentls' pytest plugin or the
search's driver: the standard library only, Python 3.7 syntax, no agent_core
import; pytest is handed to `plugin`, never imported here.
"""

from __future__ import annotations

import ast
import inspect
import sys
from typing import Any

SOURCE = __file__  # this module's file: copied beside agentls' plugin and the search's driver
EXPECTING = frozenset({"raises", "assertRaises", "assertRaisesRegex", "assertRaisesRegexp", "suppress"})
CATCH_ALL = frozenset({"BaseException"})
CATCH_ASSERTION = frozenset({"AssertionError", "Exception", "failureException"})
CATCH_FAILED = frozenset({"Failed", "OutcomeException"})
_TOOL_IDS = (4, 3, 2)  # sys.monitoring's free slots (0 debugger, 1 coverage, 5 optimizer are taken by convention)
_KEPT = 3  # exceptions noted per test call
_MESSAGE_CAP = 300

# Seen: (line in the test function, type name, first line of the message, traceback), written out in the
# annotations (a `tuple[...]` alias would be evaluated at import, which Python 3.7 cannot)


def test_code(item: Any) -> Any | None:
    """The code object of a pytest item's test function (a unittest method's too); None for another item or a
    hypothesis test (its wrapper runs the test many times and catches failing examples on purpose)."""
    func = getattr(item, "obj", None)
    func = getattr(func, "__func__", func)
    if func is None or getattr(func, "hypothesis", None) is not None:
        return None
    try:
        func = inspect.unwrap(func)
    except ValueError:
        return None
    code = getattr(func, "__code__", None)
    return code if inspect.iscode(code) else None


class Watch:
    """The assertion-kind exceptions (`kinds`) that pass through the frames of `code` while started."""

    def __init__(self, code: Any, kinds: tuple) -> None:
        self.code = code
        self.kinds = kinds
        self.seen: list[tuple[int, str, str, Any]] = []
        self._tool: int | None = None
        self._tracing = False

    def start(self) -> bool:
        """Begin watching; False when this thread cannot be watched (another tracer owns it)."""
        monitoring = getattr(sys, "monitoring", None)
        if monitoring is not None:
            for tool in _TOOL_IDS:
                if monitoring.get_tool(tool) is None:
                    monitoring.use_tool_id(tool, "agentls swallowed assertions")
                    monitoring.register_callback(tool, monitoring.events.RAISE, self._raised)
                    monitoring.set_events(tool, monitoring.events.RAISE)
                    self._tool = tool
                    return True
            return False
        if sys.gettrace() is not None:
            return False
        sys.settrace(self._call)
        self._tracing = True
        return True

    def stop(self) -> None:
        if self._tool is not None:
            monitoring = sys.monitoring  # type: ignore[attr-defined,unused-ignore]
            monitoring.set_events(self._tool, 0)
            monitoring.register_callback(self._tool, monitoring.events.RAISE, None)
            monitoring.free_tool_id(self._tool)
            self._tool = None
        if self._tracing:
            sys.settrace(None)
            self._tracing = False

    def _note(self, exc: BaseException, tb: Any) -> None:
        if len(self.seen) < _KEPT and tb is not None and tb.tb_frame.f_code is self.code:
            text = str(getattr(exc, "msg", None) or exc).strip().splitlines()
            self.seen.append((tb.tb_lineno, type(exc).__name__, text[0][:_MESSAGE_CAP] if text else "", tb))

    def _raised(self, code: Any, offset: int, exc: BaseException) -> None:
        if code is self.code and isinstance(exc, self.kinds):
            self._note(exc, exc.__traceback__)

    def _call(self, frame: Any, event: str, arg: Any) -> Any:
        if frame.f_code is not self.code:
            return None
        sys.settrace(getattr)  # a C tracer from here on: getattr(frame, "call", None) is None for every call event
        if hasattr(frame, "f_trace_lines"):  # 3.7+: no line events for this frame
            frame.f_trace_lines = False
        return self._frame_event

    def _frame_event(self, frame: Any, event: str, arg: Any) -> Any:
        if event == "exception" and isinstance(arg[1], self.kinds):
            self._note(arg[1], arg[2])
        return self._frame_event


def _end(node: ast.AST) -> int:
    end = getattr(node, "end_lineno", None)  # Python 3.8+
    if end is not None:
        return int(end)
    return max((getattr(n, "lineno", 0) for n in ast.walk(node)), default=0)


def _holds(statements: list[ast.stmt], line: int) -> ast.stmt | None:
    return next((s for s in statements if s.lineno <= line <= _end(s)), None)


def _blocks(statement: ast.stmt) -> list[tuple[str, list[ast.stmt], Any]]:
    """(part, statements, handler) of each block of a compound statement."""
    out: list[tuple[str, list[ast.stmt], Any]] = [("body", getattr(statement, "body", None) or [], None)]
    for handler in getattr(statement, "handlers", None) or []:
        out.append(("handler", handler.body, handler))
    for case in getattr(statement, "cases", None) or []:
        out.append(("case", case.body, None))
    out.append(("orelse", getattr(statement, "orelse", None) or [], None))
    out.append(("finalbody", getattr(statement, "finalbody", None) or [], None))
    return out


def _chain(function: ast.AST, line: int) -> list[tuple[ast.stmt, str]]:
    """The compound statements of `function` that hold `line`, outermost first, with the part holding it."""
    chain: list[tuple[ast.stmt, str]] = []
    statements = list(getattr(function, "body", []))
    while True:
        statement = _holds(statements, line)
        if statement is None or isinstance(statement, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            return chain
        inner = next(((part, block) for part, block, _ in _blocks(statement) if _holds(block, line)), None)
        if inner is None:
            return chain
        chain.append((statement, inner[0]))
        statements = inner[1]


def _names(node: ast.AST | None) -> list[str]:
    if node is None:
        return []
    if isinstance(node, ast.Tuple):
        return [name for element in node.elts for name in _names(element)]
    if isinstance(node, ast.Attribute):
        return [node.attr]
    if isinstance(node, ast.Name):
        return [node.id]
    return ["?"]  # a computed type: it may catch anything


def _catches(statement: ast.stmt, kind: str) -> bool:
    """Whether a `try` has a handler that may catch an exception of `kind` (a type name)."""
    wanted = CATCH_ALL | {"?", kind} | (CATCH_FAILED if kind == "Failed" else CATCH_ASSERTION)
    return any(handler.type is None or wanted & set(_names(handler.type))
               for handler in getattr(statement, "handlers", None) or [])


def _expects(statement: ast.stmt) -> bool:
    """A `with pytest.raises(...)`, `self.assertRaises(...)` or `suppress(...)`: the test expects an exception."""
    for item in getattr(statement, "items", None) or []:
        expr = item.context_expr
        func = expr.func if isinstance(expr, ast.Call) else expr
        if any(name in EXPECTING for name in _names(func)):
            return True
    return False


_DEFS: dict = {}  # id of a syntax tree -> its functions by name


def _function(tree: ast.AST, code: Any) -> ast.AST | None:
    if id(tree) not in _DEFS:  # the trees are kept in _TREES: an id is not reused
        defs: dict = {}
        for n in ast.walk(tree):
            if isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef)):
                defs.setdefault(n.name, []).append(n)
        _DEFS[id(tree)] = defs
    found = _DEFS[id(tree)].get(code.co_name, [])
    for node in found:
        first = min([d.lineno for d in node.decorator_list] + [node.lineno])
        if code.co_firstlineno in (first, node.lineno):
            return node
    return None


_TREES: dict = {}  # file name -> its syntax tree (None: unreadable), parsed once per session


def _source(code: Any) -> ast.AST | None:
    return _tree(code.co_filename)


def _tree(name: str) -> ast.AST | None:
    """The syntax tree of the file `name` (None: unreadable), parsed once."""
    if name not in _TREES:
        try:
            with open(name, encoding="utf-8") as handle:
                _TREES[name] = ast.parse(handle.read(), name)
        except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
            _TREES[name] = None
    return _TREES[name]


def why_swallowed(code: Any, seen: list[tuple[int, str, str, Any]]) -> tuple[str, Any] | None:
    """(why, the traceback where it raised) for the first exception in `seen` that the test did not catch
    itself (an `except` that may catch it) or expect (`pytest.raises`) although the test passed; None when
    each was, or when the test's source cannot be read."""
    tree = _source(code)
    function = _function(tree, code) if tree is not None else None
    if function is None:
        return None
    for line, kind, message, tb in seen:
        chain = _chain(function, line)
        if any(part == "body" and (_expects(s) if isinstance(s, (ast.With, ast.AsyncWith)) else _catches(s, kind))
               for s, part in chain):
            continue
        withs = [s for s, part in chain if part == "body" and isinstance(s, (ast.With, ast.AsyncWith))]
        raised = f"{kind}: {message}" if message else kind
        if withs:
            where = f"the `with` at line {withs[-1].lineno} of the test let it through as if nothing had failed"
        else:
            where = "it left the test function and whatever called it (a decorator, a wrapper) swallowed it"
        return (f"the test's own assertion failed at line {line} ({raised}) but the test passed: {where}. "
                f"Code that swallows the test's assertions (a `return` in a `finally:`, a broad `except`, an "
                f"`__exit__` returning True) makes any test pass: not a pass", tb)
    return None


_WITHS: dict = {}  # test code object -> the `with` statements that may swallow its assertion (None: unreadable)

# Modules whose context managers never swallow an exception raised in their block: unittest's `subTest` passes
# it through (pytest before 9) or reports it as the test's failure (pytest 9), and `mock.patch`, `pytest.warns`,
# `caplog.at_level`, `monkeypatch.context`, `open`, a temporary directory or `catch_warnings` let it out. A `with`
# of theirs needs no watch; contextlib is not one of them (an `ExitStack` runs whatever exits it is given).
FRAMEWORK_MODULES = ("unittest.case", "unittest.mock", "pytest", "_pytest", "warnings", "tempfile", "io", "_io")


def _dotted(expr: ast.AST) -> list[str] | None:
    """`a.b.c` as ["a", "b", "c"]; None for any other expression (a call's result, a subscript)."""
    names: list[str] = []
    while isinstance(expr, ast.Attribute):
        names.append(expr.attr)
        expr = expr.value
    if not isinstance(expr, ast.Name):
        return None
    return [expr.id, *reversed(names)]


def _framework_manager(expr: ast.AST, item: Any, func: Any) -> bool:
    """Whether a `with` item's manager (`expr`, or the callable it calls) is, as the test runs, an object of
    FRAMEWORK_MODULES: its first name looked up in the test's fixtures, `self`, its module and the builtins, the
    rest without running any of the project's code (`inspect.getattr_static`: no property or `__getattr__`)."""
    path = _dotted(expr.func if isinstance(expr, ast.Call) else expr)
    if path is None:
        return False
    found = _root(path[0], item, func)
    try:
        for name in path[1:]:
            found = inspect.getattr_static(found, name)
    except AttributeError:
        return False
    found = getattr(found, "__func__", found)  # a staticmethod's or classmethod's function
    module: Any = None
    if inspect.ismodule(found):
        module = found.__name__
    else:
        owner = found if inspect.isclass(found) or inspect.isroutine(found) else type(found)
        module = getattr(owner, "__module__", None)
    return isinstance(module, str) and any(module == m or module.startswith(m + ".") for m in FRAMEWORK_MODULES)


_MISSING = object()


def _root(name: str, item: Any, func: Any) -> Any:
    """What `name` is in the test function as it runs: a fixture, `self`, a global of its module, a builtin
    (_MISSING: none of these)."""
    funcargs = getattr(item, "funcargs", None)
    if isinstance(funcargs, dict) and name in funcargs:
        return funcargs[name]
    if name == "self":
        owner = getattr(getattr(item, "obj", None), "__self__", None) or getattr(item, "instance", None)
        return _MISSING if owner is None else owner
    found = (getattr(func, "__globals__", None) or {}).get(name, _MISSING)
    if found is _MISSING:
        import builtins

        found = getattr(builtins, name, _MISSING)
    return found


def _withs(code: Any) -> list | None:
    """The `with` statements of a test function that do not expect an exception (None: its source is unread)."""
    if code not in _WITHS:
        tree = _source(code)
        function = _function(tree, code) if tree is not None else None
        _WITHS[code] = None if function is None else [
            n for n in ast.walk(function) if isinstance(n, (ast.With, ast.AsyncWith)) and not _expects(n)]
    return _WITHS[code]


def warm(items: Any = (), paths: Any = ()) -> None:
    """Read now what the watch reads of these pytest items' test functions (or of these test files): the
    search's driver calls it before it forks a child per candidate, which would each parse the test files
    again (more-itertools' 6,000-line test module: a third of a second per candidate)."""
    for item in items:
        code = test_code(item)
        if code is not None:
            _withs(code)
    for path in paths:
        _tree(path)


def needs_watch(item: Any, code: Any) -> bool:
    """Whether the code under test could swallow this test's own assertion: only a `with` in the test function
    (other than one expecting an exception: `pytest.raises`, `assertRaises`, `suppress`, or one of the test
    framework's or the standard library's own managers: FRAMEWORK_MODULES) or a wrapper around the function (a
    decorator that keeps `__wrapped__`) stands between its assertion and pytest. A test with neither is not
    watched: before 3.12 the watch keeps a global tracer on while the test runs (more-itertools' suite on 3.11:
    its `test_primes`, a `with self.subTest()` in a loop of 10,000 primes, took 18.7 s unwatched, 47 s watched)."""
    func = getattr(item, "obj", None)
    func = getattr(func, "__func__", func)
    withs = _withs(code)
    if withs is None:
        return True  # the source cannot be read: watched
    if getattr(func, "__wrapped__", None) is not None:
        return True
    if not withs:
        return False
    return not all(_framework_manager(part.context_expr, item, func) for n in withs for part in n.items)


def plugin(pytest: Any) -> Any:
    """A pytest plugin object (register it, or pass it in `pytest.main(plugins=...)`) that fails a test whose
    call passed although its own assertion raised and was swallowed (why_swallowed)."""
    failed = pytest.fail.Exception

    class SwallowedAssertions:
        warm = staticmethod(warm)  # for the search's driver, which holds this object only

        @pytest.hookimpl(hookwrapper=True)
        def pytest_runtest_call(self, item: Any) -> Any:
            code = test_code(item)
            watched = code is not None and needs_watch(item, code)
            watch = Watch(code, (AssertionError, failed)) if watched else None
            started = watch is not None and watch.start()
            try:
                outcome = yield
            finally:
                if started and watch is not None:
                    watch.stop()
            if not started or watch is None or not watch.seen or outcome.excinfo is not None:
                return
            found = why_swallowed(watch.code, watch.seen)
            watch.seen = []
            if found is None:
                return
            exc = failed(found[0]).with_traceback(found[1])
            if hasattr(outcome, "force_exception"):  # pluggy 1.1+
                outcome.force_exception(exc)
            else:
                raise exc

    return SwallowedAssertions()
