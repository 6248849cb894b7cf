"""The gate's rigging rule: a candidate that patches what judges it is refused, whatever the safety setting.

A fix is judged by the project's tests run with pytest; code under test runs
in the same interpreter, so it could change the judge instead of the bug:
rebind a builtin (`builtins.AssertionError = pytest.skip.Exception`,
`__builtins__["AssertionError"] = ...`, `AssertionError = ...`), patch the
test framework (`unittest.TestCase.assertEqual = lambda *a: None`,
`setattr(pytest, ...)`, `sys.modules["_pytest"] = ...`), skip instead of
pass (`pytest.skip()` in a function, a module-level skip, `pytest.xfail`,
`pytest.exit`, `raise unittest.SkipTest`), or reach agentls' own test report
(a string naming `agentls`, `results.jsonl`, `PYTEST_AGENTLS` or
`/proc/self/fd`). `rigging_findings` finds these in a Python text through
the gate's name resolution (names.py: aliases, from-imports,
`importlib`); `refuse_rigging`, called by the gate node, puts each changed
file with a finding the original did not have back as it was, journals the
refusal and tells the coder why. It is not a safety question the user can
approve: a rigged verification says nothing about the code. (The verdict
rule, testing/verdict.py, would also fail such a candidate; this says why,
before a test run.)
"""

from __future__ import annotations

import ast
from pathlib import PurePosixPath

from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import tests_protected, write_shadow_file
from agent_core.pipeline.safety.names import Names
from agent_core.pipeline.state import RunState
from agent_core.workspace.changeset import compute_change_set

JUDGES = frozenset({"builtins", "__builtins__", "unittest", "pytest", "_pytest", "pluggy", "doctest"})
ASSERTION_NAMES = frozenset({"AssertionError", "__builtins__", "__import__"})
SKIPS = frozenset({
    "pytest.skip", "pytest.xfail", "pytest.exit", "pytest.importorskip", "pytest.skip.Exception",
    "pytest.xfail.Exception", "pytest.exit.Exception", "unittest.SkipTest", "unittest.skip", "unittest.skipIf",
    "unittest.skipUnless", "unittest.expectedFailure", "unittest.case.SkipTest",
})
REPORTER_MARKS = ("results.jsonl", "pytest_agentls", "agentls_report", ".agentls/tests", "/proc/self/fd")


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

    def visit_Call(self, node: ast.Call) -> None:
        func = self.names.qualify(node.func)
        if func in SKIPS:
            self._add(node, f"calls `{func}`: a skipped test is not a passing one")
        elif func in ("setattr", "delattr", "builtins.setattr", "builtins.delattr") and node.args:
            owner = self.names.qualify(node.args[0])
            if _root(owner) in JUDGES:
                self._add(node, f"{func}() on `{owner}`: builtins or the test framework judge the run")
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
        if isinstance(node.value, str) and any(mark in node.value.lower() for mark in REPORTER_MARKS):
            self._add(node, "names agentls' test report channel: the code under test does not write the verdict")


def rigging_findings(text: str, file: str = "<string>") -> list[tuple[int, str]]:
    """(line, why) for each way `text` patches or bypasses what judges the tests; [] when it does not parse."""
    try:
        tree = ast.parse(text, filename=file)
    except (SyntaxError, ValueError):
        return []
    finder = _Finder(Names(tree))
    finder.visit(tree)
    return finder.found


def refuse_rigging(state: RunState, deps: RunDeps) -> RunState:
    """Put back each changed Python file that rigs the verification; the state keys that tell the coder."""
    if not tests_protected(deps.request):
        return RunState()
    notes = []
    for change in compute_change_set(deps.shadow).changes:
        if change.new is None or PurePosixPath(change.path).suffix not in (".py", ".pyi"):
            continue
        old = {why for _, why in rigging_findings(change.original or "", change.path)}
        new = [(line, why) for line, why in rigging_findings(change.new, change.path) if why not in old]
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
