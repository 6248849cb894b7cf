"""The tester in the loop: tests for the goal, written and run before any change (seed 002's tester).

(A project with no test at all, pytest's "no tests collected", is no broken
baseline for a run with the user's goal: the goal's tests are its first.)

A task, or a fix with the user's own goal or selection, whose baseline has no
failing test has nothing that would tell a right change from a wrong one:
the existing tests passed before and pass after almost any edit. The
`specify` node asks the tester for tests of the goal
(`agents/tester/goal.py`), keeps those that compile and define their test,
runs each from a file of its own in one sandbox run. A test that passes
already says nothing about the change and is dropped; the ones that fail
(an assertion, or an import of a name that does not exist yet) are kept and
written to one new test file. With none kept the run goes on, judged by the
existing tests, and says so. The kept tests join the baseline report (the
coder sees them failing), they are put back as written before every
verdict run (`protected_tests.py`, so a candidate cannot rewrite its own
judge), and the file is part of the change set, where the user can drop it
in the editor's preview.
"""

from __future__ import annotations

import re
from pathlib import Path, PurePosixPath

from agent_core.agents.tester.goal import write_goal_tests
from agent_core.agents.tester.schema import GeneratedTest
from agent_core.analysis.symbols import test_files
from agent_core.gentests.targets import module_import_path
from agent_core.gentests.testfile import BadTestCode, SplitTest, candidate_text, compose, split_code
from agent_core.models import TestReport
from agent_core.pipeline.attempts import best_state
from agent_core.pipeline.context import python_files
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.protected_tests import write_shadow_file
from agent_core.pipeline.state import GoalTestsNote, RunState, stored
from agent_core.pipeline.testrun import run_checked
from agent_core.workspace.testfiles import is_test_file

SOURCES_BUDGET = 6000
EXAMPLE_CHARS = 1200


def _slug(goal: str) -> str:
    words = [w for w in re.findall(r"[a-z0-9]+", goal.lower()) if len(w) > 1][:4]
    return "_".join(words) or "task"


def goal_test_path(root: Path, goal: str) -> str:
    """A new test file in the project's test folder (tests/ or test/, else beside its tests, else tests/)."""
    folder = next((f for f in ("tests", "test") if (root / f).is_dir()), None)
    if folder is None:
        existing = test_files(root)
        folder = existing[0].parent.relative_to(root).as_posix() if existing else "tests"
    stem, n = f"test_goal_{_slug(goal)}", 1
    while (root / folder / f"{stem}{'' if n == 1 else f'_{n}'}.py").exists():
        n += 1
    return (PurePosixPath(folder) / f"{stem}{'' if n == 1 else f'_{n}'}.py").as_posix().removeprefix("./")


def _context(deps: RunDeps) -> tuple[str, str, str]:
    """(sources, import lines, an existing test) for the tester's prompt."""
    root, used = deps.shadow.root, 0
    shown: list[str] = []
    imports: list[str] = []
    files = [deps.request.target_file] if deps.request.target_file else []
    files += [f for f in python_files(deps.shadow, limit=60) if not is_test_file(f)]
    for rel in dict.fromkeys(files):
        text = deps.shadow.readable(rel)
        if text is not None and not shown and len(text) > SOURCES_BUDGET:  # the main file, cut, beats nothing
            text = text[:SOURCES_BUDGET] + "\n# ... (cut)"
        if text is None or used + len(text) > SOURCES_BUDGET + 20:
            continue
        used += len(text)
        shown.append(f"### {rel}\n```python\n{text}\n```")
        imports.append(f"{rel}: import {module_import_path(root, rel)}")
    example = ""
    tests = [f for f in python_files(deps.shadow, limit=200) if is_test_file(f) and not f.endswith("conftest.py")]
    if tests:
        example = f"### {tests[0]}\n```python\n{(deps.shadow.readable(tests[0]) or '')[:EXAMPLE_CHARS]}\n```"
    return "\n\n".join(shown) or "(no Python source yet)", "\n".join(imports) or "(none)", example


def _asked(deps: RunDeps, state: RunState) -> str:
    """What the user asked, in their words (names the file): the goal, else a diagnostic, else the symbol."""
    request = deps.request
    return (request.goal or "").strip() or next(iter(request.diagnostics), "") or request.target_symbol or state["goal"]


def _usable(tests: list[GeneratedTest]) -> list[tuple[str, SplitTest]]:
    out, seen = [], set()
    for test in tests:
        try:
            split = split_code(test.code, test.name)
        except BadTestCode:
            continue  # a test that cannot run is no specification
        if test.name not in seen:
            seen.add(test.name)
            out.append((test.name, split))
    return out


async def _failing_before(deps: RunDeps, state: RunState, rel: str, written: list[tuple[str, SplitTest]]) -> list[str]:
    """The generated tests that fail on the code as it is: each runs from a file of its own (one sandbox run),
    so a test whose import of a not-yet-existing name fails does not hide the others' outcome."""
    stem = rel.removesuffix(".py")
    files = {name: f"{stem}_{i}.py" for i, (name, _) in enumerate(written, 1)}
    for name, split in written:
        _place(deps, files[name], candidate_text(split))
    try:
        report, _ = await run_checked(deps, state.get("baseline"), select=list(files.values()))
    finally:
        for path in files.values():
            _place(deps, path, None)
    failing = {f.nodeid.partition("::")[0] for f in report.failures}
    return [name for name, _ in written if files[name] in failing]


def _place(deps: RunDeps, rel: str, text: str | None) -> None:
    """Write (None: remove) a generated test file; in a fix run it joins the protected files the guard keeps."""
    write_shadow_file(deps, rel, text)
    if text is None:
        deps.shadow.verification.pop(rel, None)
    else:
        deps.shadow.verification[rel] = text.encode()


def merge_reports(baseline: TestReport, extra: TestReport) -> TestReport:
    """The baseline with the goal tests' run added (counts, failures), as one report of the code before the change."""
    return baseline.model_copy(update={
        "passed": baseline.passed + extra.passed, "failed": baseline.failed + extra.failed,
        "errors": baseline.errors + extra.errors, "failures": [*baseline.failures, *extra.failures],
        "duration_s": baseline.duration_s + extra.duration_s,
        "exit_code": baseline.exit_code if baseline.passed or baseline.failures else extra.exit_code,
        "output": f"{extra.output}\n{baseline.output}".strip(),
    })


async def specify(state: RunState, deps: RunDeps) -> RunState:
    """Write tests of the goal, keep those that fail on the code as it is, and make them part of the baseline."""
    deps.phase("testing", "writing tests for the goal", 8)
    sources, imports, example = _context(deps)
    written = _usable(await write_goal_tests(deps.llm, goal=state["goal"], sources=sources, imports=imports,
                                             example=example))
    asked = _asked(deps, state)
    rel = goal_test_path(deps.shadow.root, asked)
    names = [name for name, _ in written]
    header = f"Tests agentls wrote for the goal: {' '.join(asked.split())[:120]}"
    kept = await _failing_before(deps, state, rel, written) if written else []
    dropped = [n for n in names if n not in kept]
    if not kept:
        deps.journal.write("goal_tests", path=rel, kept=[], dropped=dropped, failing_before=None)
        deps.notice("no generated test of the goal failed before the change: the existing tests alone judge it",
                    "warning")
        return RunState(goal_tests=GoalTestsNote(path=rel, tests=[], dropped=dropped))
    text = compose(None, [(split, None) for name, split in written if name in kept], header)
    _place(deps, rel, text)
    report, _ = await run_checked(deps, state.get("baseline"), select=[rel])
    return _kept(state, deps, rel, text, kept, dropped, report)


def _kept(state: RunState, deps: RunDeps, rel: str, text: str, kept: list[str], dropped: list[str],
          report: TestReport) -> RunState:
    deps.goal_tests = {rel: text}
    baseline = state["baseline"]
    assert baseline is not None  # the goal's tests are written after the baseline run
    merged = stored(merge_reports(baseline, report))
    deps.journal.write("goal_tests", path=rel, kept=kept, dropped=dropped,
                       failing_before=[f.nodeid for f in report.failures])
    deps.notice(f"wrote {len(kept)} test(s) of the goal in {rel}; they fail now and must pass after the change")
    return RunState(goal_tests=GoalTestsNote(path=rel, tests=kept, dropped=dropped), baseline=merged,
                    report=merged, best=best_state(deps.shadow, merged))
