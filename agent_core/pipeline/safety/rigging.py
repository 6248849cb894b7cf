"""The gate's rigging rule: a candidate that patches what judges it is refused, whatever the safety setting.

A fix is judged by the project's tests run with pytest; code under test runs
in the same interpreter, so it could change the judge instead of the bug:
rebind a builtin (`builtins.AssertionError = pytest.skip.Exception`,
`__builtins__["AssertionError"] = ...`, `AssertionError = ...`), patch the
test framework (`unittest.TestCase.assertEqual = lambda *a: None`,
`setattr(pytest, ...)`, `sys.modules["_pytest"] = ...`), skip instead of
pass (`pytest.skip()` in a function, a module-level skip, `pytest.xfail`,
`pytest.exit`, `raise unittest.SkipTest`), reach agentls' own test report
(a string naming `agentls`, `results.jsonl`, `PYTEST_AGENTLS` or
`/proc/self/fd`), answer every comparison the same (an `__eq__`, `__ne__`,
`__hash__` or `__bool__` that returns a constant), patch a module it imports by
a computed name (`setattr(__import__("unit" + "test").TestCase, ...)`), or
behave differently under test than for the user: read pytest's variables
(`PYTEST_CURRENT_TEST`), ask whether pytest is loaded (`"pytest" in
sys.modules`), read the calling test's frame for its expected values
(`sys._getframe`, `f_back`, `inspect.stack`), or name a test file to
read its assertions; or reach into the test run: install a tracer or
profiler, walk the interpreter's objects (`gc.get_objects`), swap a
function's `__code__`, or add an import hook (`sys.meta_path`). `rigging_findings` finds these in a Python text through
the gate's name resolution (names.py: aliases, from-imports,
`importlib`); `refuse_rigging`, called by the gate node, puts each changed
file with a finding the original did not have back as it was, journals the
refusal and tells the coder why; so does a change that swallows the tests'
errors (safety/swallows.py). It is not a safety question the user can
approve: a rigged verification says nothing about the code. (The verdict
rule, testing/verdict.py, would also fail such a candidate; this says why,
before a test run.)
"""

from __future__ import annotations

import ast
import re
from pathlib import PurePosixPath

from agent_core.analysis import pysyntax
from agent_core.analysis.swallowing import swallowing_findings, weakened_checks
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import tests_protected, write_shadow_file
from agent_core.pipeline.safety.names import IMPORT_FUNCTIONS, Names
from agent_core.pipeline.safety.swallows import REFUSED, failing_types
from agent_core.pipeline.state import RunState
from agent_core.search import failing_literals, literal
from agent_core.workspace.changeset import compute_change_set

JUDGES = frozenset({"builtins", "__builtins__", "unittest", "pytest", "_pytest", "pluggy", "doctest"})
ASSERTION_NAMES = frozenset({"AssertionError", "__builtins__", "__import__"})
SKIPS = frozenset({
    "pytest.skip", "pytest.xfail", "pytest.exit", "pytest.importorskip", "pytest.skip.Exception",
    "pytest.xfail.Exception", "pytest.exit.Exception", "unittest.SkipTest", "unittest.skip", "unittest.skipIf",
    "unittest.skipUnless", "unittest.expectedFailure", "unittest.case.SkipTest",
})
REPORTER_MARKS = ("results.jsonl", "pytest_agentls", "agentls_report", ".agentls/tests", "/proc/self/fd")
# Code that behaves one way under test and another for the user passes the tests and fixes nothing: reading
# pytest's variables (PYTEST_CURRENT_TEST), asking whether pytest is loaded or started the process, reading the
# calling test's frame (its expected values), or reading a test file (its assertions).
UNDER_TEST = "asks whether it runs under a test: code that behaves differently there forges the verdict"
FRAMES = frozenset({"sys._getframe", "sys._current_frames", "inspect.currentframe", "inspect.stack",
                    "inspect.getouterframes", "inspect.trace", "traceback.extract_stack", "traceback.walk_stack"})
FRAME_ATTRIBUTES = frozenset({"f_back", "f_locals", "f_globals"})
READS_FRAMES = "reads the calling frames: the tests' own values are not the code's input"
TEST_FILE = re.compile(r"(^|[/\\])(test_[^/\\]*\.py|[^/\\]*_test\.py|conftest\.py)$")
NAMES_TEST_FILE = "names a test file: the code under test does not read the tests' expectations"
# Code that reaches into the test run itself: a tracer or profiler sees (and can redirect) every test frame, a
# walk over the interpreter's objects finds the test functions, a function's `__code__` swapped makes the test
# that runs another than the one written, and an import hook can rewrite the test modules as they load.
TRACERS = frozenset({"sys.settrace", "sys.setprofile", "threading.settrace", "threading.setprofile",
                     "threading.settrace_all_threads", "threading.setprofile_all_threads",
                     "sys.monitoring.register_callback", "sys.monitoring.set_events"})
TRACES = "installs a tracer: code under test that watches the test run can steer it"
OBJECT_WALKS = frozenset({"gc.get_objects", "gc.get_referrers", "gc.get_referents"})
WALKS = "walks the interpreter's objects: that is how code under test reaches the tests' own functions"
SWAPS_CODE = "replaces a function's `__code__`: the test that runs is no longer the test written"
IMPORT_HOOKS = ("sys.meta_path", "sys.path_hooks")
HOOKS_IMPORTS = "installs an import hook: it can rewrite the test modules as they load"
_FRAMEWORKS = ("pytest", "_pytest", "unittest")
# A value whose comparison, hash or truth is a constant passes every assertion about it: `assert add(2, 3) == 5`
# holds for an `int` subclass whose `__eq__` returns True, whatever `add` computed.
CONSTANT_DUNDERS = frozenset({"__eq__", "__ne__", "__hash__", "__bool__"})
CONSTANT_ANSWER = "defines `{name}` returning a constant: every assertion that compares such a value passes"
COMPUTED_PATCH = "{func}() on a module imported by a computed name: the test framework or builtins, hidden"


def _root(dotted: str | None) -> str:
    return (dotted or "").split(".")[0]


class _Finder(ast.NodeVisitor):
    """Walks one module and collects (line, why) for every rigging form it sees."""

    def __init__(self, names: Names) -> None:
        self.names = names
        self.found: list[tuple[int, str]] = []

    def _add(self, node: ast.AST, why: str) -> None:
        self.found.append((getattr(node, "lineno", 1), why))

    def _target(self, target: ast.AST) -> None:
        if isinstance(target, ast.Name) and target.id in ASSERTION_NAMES:
            self._add(target, f"rebinds `{target.id}`, the assertion machinery the tests rely on")
        elif isinstance(target, ast.Attribute) and target.attr == "__code__":
            self._add(target, SWAPS_CODE)
        elif isinstance(target, (ast.Attribute, ast.Subscript)) and self._import_hooks(target):
            self._add(target, HOOKS_IMPORTS)
        elif isinstance(target, (ast.Attribute, ast.Subscript)):
            owner = self.names.qualify(target)  # `builtins.AssertionError`; `sys.modules["pytest"]` is `pytest`
            if owner is None and isinstance(target, ast.Subscript):
                owner = self.names.qualify(target.value)  # `__builtins__["AssertionError"]`
            if _root(owner) in JUDGES:
                self._add(target, f"patches `{owner}`: builtins or the test framework judge the run")
        elif isinstance(target, (ast.Tuple, ast.List)):
            for element in target.elts:
                self._target(element)

    def visit_Assign(self, node: ast.Assign) -> None:
        for target in node.targets:
            self._target(target)
        self.generic_visit(node)

    def visit_AugAssign(self, node: ast.AugAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_AnnAssign(self, node: ast.AnnAssign) -> None:
        self._target(node.target)
        self.generic_visit(node)

    def visit_Delete(self, node: ast.Delete) -> None:
        for target in node.targets:
            self._target(target)
        self.generic_visit(node)

    def _import_hooks(self, node: ast.AST) -> bool:
        """`sys.meta_path`, `sys.path_hooks[0]`, `sys.meta_path.insert`: the import system's hook lists."""
        while isinstance(node, ast.Subscript):
            node = node.value
        qualified = self.names.qualify(node) or ""
        return any(qualified == hooks or qualified.startswith(hooks + ".") for hooks in IMPORT_HOOKS)

    def _framework(self, node: ast.AST) -> bool:
        return isinstance(node, ast.Constant) and isinstance(node.value, str) and (
            node.value.lower().lstrip("_").startswith(_FRAMEWORKS[0]) or node.value in _FRAMEWORKS)

    def _constant_dunder(self, node: ast.FunctionDef | ast.AsyncFunctionDef) -> None:
        if node.name not in CONSTANT_DUNDERS:
            return
        returns = [n for n in ast.walk(node) if isinstance(n, ast.Return)]
        if returns and all(isinstance(r.value, ast.Constant) for r in returns):
            self._add(node, CONSTANT_ANSWER.format(name=node.name))

    def visit_FunctionDef(self, node: ast.FunctionDef) -> None:
        self._constant_dunder(node)
        self.generic_visit(node)

    def visit_AsyncFunctionDef(self, node: ast.AsyncFunctionDef) -> None:
        self._constant_dunder(node)
        self.generic_visit(node)

    def _computed_import(self, node: ast.AST) -> bool:
        """Whether `node` holds an import of a computed module name (`__import__("unit" + "test")`)."""
        return any(isinstance(n, ast.Call) and (self.names.qualify(n.func) or "").removeprefix("builtins.")
                   in IMPORT_FUNCTIONS and not (n.args and isinstance(n.args[0], ast.Constant))
                   for n in ast.walk(node))

    def visit_Compare(self, node: ast.Compare) -> None:
        operands = [node.left, *node.comparators]  # `"pytest" in sys.modules`, `"pytest" in sys.argv[0]`
        if any(self._framework(o) for o in operands) and any(
                _root(self.names.qualify(o.value if isinstance(o, ast.Subscript) else o)) == "sys"
                for o in operands if isinstance(o, (ast.Attribute, ast.Subscript))):
            self._add(node, UNDER_TEST)
        self.generic_visit(node)

    def visit_Attribute(self, node: ast.Attribute) -> None:
        if node.attr in FRAME_ATTRIBUTES:
            self._add(node, READS_FRAMES)
        self.generic_visit(node)

    def visit_Call(self, node: ast.Call) -> None:
        func = self.names.qualify(node.func)
        if func in FRAMES:
            self._add(node, READS_FRAMES)
        elif func in TRACERS:
            self._add(node, TRACES)
        elif func in OBJECT_WALKS:
            self._add(node, WALKS)
        elif self._import_hooks(node.func):
            self._add(node, HOOKS_IMPORTS)
        elif (func in ("setattr", "builtins.setattr") and len(node.args) > 1
              and isinstance(node.args[1], ast.Constant) and node.args[1].value == "__code__"):
            self._add(node, SWAPS_CODE)
        elif func in ("sys.modules.get", "sys.modules.__contains__") and any(self._framework(a) for a in node.args):
            self._add(node, UNDER_TEST)
        if func in SKIPS:
            self._add(node, f"calls `{func}`: a skipped test is not a passing one")
        elif func in ("setattr", "delattr", "builtins.setattr", "builtins.delattr") and node.args:
            owner = self.names.qualify(node.args[0])
            if _root(owner) in JUDGES:
                self._add(node, f"{func}() on `{owner}`: builtins or the test framework judge the run")
            elif owner is None and self._computed_import(node.args[0]):
                self._add(node, COMPUTED_PATCH.format(func=func))
        elif isinstance(node.func, ast.Attribute) and node.func.attr in ("setattr", "delattr") and node.args:
            first = node.args[0]  # monkeypatch.setattr("builtins.X", ...), mock.patch-like string targets
            if isinstance(first, ast.Constant) and isinstance(first.value, str) and _root(first.value) in JUDGES:
                self._add(node, f"patches `{first.value}`: builtins or the test framework judge the run")
        self.generic_visit(node)

    def visit_Raise(self, node: ast.Raise) -> None:
        exc = node.exc.func if isinstance(node.exc, ast.Call) else node.exc
        raised = self.names.qualify(exc) if exc is not None else None
        if raised in SKIPS or _root(raised) == "_pytest":
            self._add(node, f"raises `{raised}`: a skipped test is not a passing one")
        self.generic_visit(node)

    def visit_Constant(self, node: ast.Constant) -> None:
        if not isinstance(node.value, str):
            return
        if any(mark in node.value.lower() for mark in REPORTER_MARKS):
            self._add(node, "names agentls' test report channel: the code under test does not write the verdict")
        elif node.value.startswith("PYTEST_"):  # PYTEST_CURRENT_TEST, PYTEST_VERSION, PYTEST_XDIST_WORKER
            self._add(node, UNDER_TEST)
        elif TEST_FILE.search(node.value.strip()):
            self._add(node, NAMES_TEST_FILE)


def rigging_findings(text: str, file: str = "<string>") -> list[tuple[int, str]]:
    """(line, why) for each way `text` patches or bypasses what judges the tests; [] when it does not parse."""
    try:
        tree = pysyntax.parse(text, file)
    except (SyntaxError, ValueError):
        return []
    finder = _Finder(Names(tree))
    finder.visit(tree)
    return finder.found


HARD_CODED = ("answers the failing test's own inputs with its expected value (a branch for those literals): "
              "right for the test, wrong for every other input")
_TRIVIAL = frozenset({("int", 0), ("int", 1), ("int", -1), ("bool", True), ("bool", False), ("NoneType", None),
                      ("str", ""), ("float", 0.0), ("float", 1.0)})


def _constants(node: ast.AST) -> list[tuple[str, object]] | None:
    """The literal(s) `node` is: a constant, a negated number, or a tuple/list of them; None otherwise."""
    if isinstance(node, ast.Constant):
        return [literal(node)]
    if isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub) and isinstance(node.operand, ast.Constant) \
            and isinstance(node.operand.value, (int, float)):
        return [(type(node.operand.value).__name__, -node.operand.value)]
    if isinstance(node, (ast.Tuple, ast.List)) and node.elts:
        parts = [_constants(e) for e in node.elts]
        return None if any(p is None for p in parts) else [c for p in parts for c in p or []]
    return None


def _compared(test: ast.AST) -> list[tuple[str, object]] | None:
    """The literals a condition compares values with by equality (`a == 2 and b == 3`, `(a, b) == (2, 3)`,
    `x in ('a', 'b')`); None when any part of it is something else."""
    if isinstance(test, ast.BoolOp) and isinstance(test.op, ast.And):
        parts = [_compared(v) for v in test.values]
        return None if any(p is None for p in parts) else [c for p in parts for c in p or []]
    if isinstance(test, ast.Compare) and all(isinstance(op, (ast.Eq, ast.In, ast.Is)) for op in test.ops):
        found = [_constants(o) for o in (test.left, *test.comparators)]
        known = [c for c in found if c is not None]
        return [c for cs in known for c in cs] if len(known) == len(found) - 1 else None
    return None


def hard_coded_findings(text: str, literals: frozenset[tuple[str, object]]) -> list[tuple[int, str]]:
    """(line, HARD_CODED) for each `if` of `text` that compares values with literals of the failing tests only
    and returns (or assigns) one of their literals: the test's inputs answered with its expected value. Trivial
    literals alone (0, 1, None, "") are a base case, not a forgery (`if n == 0: return 1`)."""
    if not literals:
        return []
    try:
        tree = pysyntax.parse(text)
    except (SyntaxError, ValueError):
        return []
    out: list[tuple[int, str]] = []
    for node in ast.walk(tree):
        compared = _compared(node.test) if isinstance(node, (ast.If, ast.IfExp)) else None
        if not compared or any(c not in literals for c in compared):
            continue
        answers = [_constants(node.body)] if isinstance(node, ast.IfExp) else [  # `5 if (a, b) == (2, 3) else ...`
            _constants(s.value) for s in node.body  # type: ignore[attr-defined]
            if isinstance(s, (ast.Return, ast.Assign)) and s.value is not None]
        given = [c for a in answers if a is not None for c in a]
        if given and all(c in literals for c in given) and not set(compared + given) <= _TRIVIAL:
            out.append((getattr(node, "lineno", 1), HARD_CODED))
    return out


def refuse_rigging(state: RunState, deps: RunDeps) -> RunState:
    """Put back each changed Python file that rigs the verification; the state keys that tell the coder."""
    if not tests_protected(deps.request):
        return RunState()
    notes = []
    literals = failing_literals(state.get("baseline"), deps.shadow.root)
    types = failing_types(state.get("baseline"))
    for change in compute_change_set(deps.shadow).changes:
        if change.new is None or PurePosixPath(change.path).suffix not in (".py", ".pyi"):
            continue
        old = {why for _, why in [*rigging_findings(change.original or "", change.path),
                                  *hard_coded_findings(change.original or "", literals)]}
        new = [(line, why) for line, why in [*rigging_findings(change.new, change.path),
                                             *hard_coded_findings(change.new, literals)] if why not in old]
        new += [(line, f"{REFUSED}: {why}") for line, why in swallowing_findings(change.original or "", change.new,
                                                                                types)]
        new += [(line, f"refused: {why}") for line, why in weakened_checks(change.original or "", change.new)]
        if not new:
            continue
        write_shadow_file(deps, change.path, change.original)
        line, why = new[0]
        reason = f"refused by the gate: line {line} {why}; the change to this file was undone"
        deps.journal.write("tool_call", tool="gate", args={"path": change.path}, result=reason, ok=False)
        deps.journal.write("gate_refused", file=change.path, line=line, rule="rigging", reason=why)
        deps.notice(f"{change.path}: {reason}", "warning")
        notes.append(f"- {change.path}: {reason}")
    if not notes:
        return RunState()
    return RunState(tool_errors=[*(state.get("tool_errors") or []), *notes], checked=None)
