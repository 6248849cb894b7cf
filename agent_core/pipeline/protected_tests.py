"""The tests that judge a run, kept out of the candidate's reach: a fix run's tests and a task run's goal tests.

In a fix run the tests are the specification and the test configuration is
the judge: test files, conftest.py, pytest's configuration files, start-up
hooks and .pth files (`workspace/testfiles.py`) are protected, whatever the
goal says, unless the goal explicitly asks to change the tests
(`goal_asks_to_change_tests`). Protection is enforced twice: the coder's edits
to those files are refused (`pipeline/coder/edits.py`), and around every sandboxed
test run `guard_verification` puts every protected file back as the run found
it (a new conftest.py is removed, a changed pytest.ini restored), whoever
changed it, and reports each such change as a refused edit.

Test files are what the project's pytest collects, not only what their names
look like: `protect_collected` adds every file the baseline run collected
tests from (`TestReport.test_files`: a `tests.py`, a `*_check.py` that
`python_files` names) to the protected set, as the run found it, and the
data modules they import their values from (a root `fixtures.py`); the name
rule (`workspace/testfiles.py`) still holds when collection says nothing.

In a task run the tester's tests of the goal judge instead: `nodes/specify.py`
records the kept tests in `deps.goal_tests` (path -> text);
`run_checked` calls `restore_goal_tests` around every verdict run, so a
candidate that edits them is undone and told why, as `guard_verification`
does in a fix run.
"""

from __future__ import annotations

import re

from agent_core.models import RunRequest, TestReport
from agent_core.pipeline.coder.edits import protected_refusal
from agent_core.pipeline.deps import RunDeps
from agent_core.workspace.shadow import write_exact
from agent_core.workspace.testfiles import collected_entries, imported_data_entries, restore_protected

_TEST_OBJECT = (r"(?:tests?\b|test (?:file|code|case|suite)s?|test_\w+\.py|\w+_test\.py|asserts?\b|assertions?"
                r"|conftest|pytest\.ini|test config\w*|expected (?:value|output|result)s?)")
_FILLER = (
    r"(?:\s+(?:the|a|an|this|that|these|those|its|their|my|our|existing|old|new|wrong|broken|outdated|unit|expected))"
)
_EDIT_VERB = (
    r"(?:\b(?:updat|chang|modif|edit|rewrit|adjust|correct|amend|renam|delet|remov|writ|replac)\w*"
    r"|\badd(?:s|ed|ing)?\b)"
)
_ASKS = [
    re.compile(rf"{_EDIT_VERB}{_FILLER}{{0,3}}\s+{_TEST_OBJECT}", re.IGNORECASE),
    # "fix the test in test_x.py", "fix the assertion"; not "fix the failing tests" (make them pass)
    re.compile(
        rf"\bfix\w*{_FILLER}{{0,2}}\s+(?:tests? (?:in|of|file)\b|test_\w+\.py|\w+_test\.py|assert)", re.IGNORECASE
    ),
]
_FORBIDS = [
    re.compile(
        r"\b(?:do not|don't|dont|never|must not|mustn't|should not|shouldn't|without|no|not)\b"
        r"[^.;!?\n]{0,40}?\b(?:tests?|test files?|assert\w*|conftest)\b",
        re.IGNORECASE,
    ),
    re.compile(r"\b(?:leave|keep)\b[^.;!?\n]{0,20}?\btests?\b", re.IGNORECASE),
    re.compile(r"\btests? (?:are|is) (?:right|correct|the spec\w*)", re.IGNORECASE),
]


def goal_asks_to_change_tests(goal: str | None) -> bool:
    """True when the goal's own words ask to change tests or their configuration.

    "update the test", "fix the test in test_calc.py", "change the assertion"
    ask; "fix the failing tests" (make them pass) does not, and any words that
    forbid it ("do not change the tests", "leave the tests alone") win.
    """
    text = goal or ""
    if any(p.search(text) for p in _FORBIDS):
        return False
    return any(p.search(text) for p in _ASKS)


def tests_protected(request: RunRequest) -> bool:
    """Whether the tests and the test configuration are out of the candidate's reach in this run.

    Only the user's own words count (`request.goal`), not the code or the
    diagnostics the editor adds to the run's goal.
    """
    return request.kind == "fix" and not goal_asks_to_change_tests(request.goal)


def guard_verification(deps: RunDeps, moment: str) -> list[str]:
    """Put the protected files back as the run found them; one refused-edit line per file that differed.

    Each change is journalled as a refused tool call; the lines go to the coder
    with the other edits that could not be applied.
    """
    if not tests_protected(deps.request):
        return []
    notes = []
    for rel in restore_protected(deps.shadow.root, deps.shadow.verification):
        why = f"changed {moment}; undone, the tests run with the project's own files: {protected_refusal(rel)}"
        deps.journal.write("tool_call", tool="guard_verification", args={"path": rel}, result=why, ok=False)
        notes.append(f"- {rel}: {why}")
    return notes


def protect_collected(deps: RunDeps, baseline: TestReport) -> list[str]:
    """Protect the files the baseline's pytest collected tests from, as they are now; the paths added."""
    if not tests_protected(deps.request):
        return []
    added = collected_entries(deps.shadow.root, baseline.test_files, deps.shadow.verification)
    deps.shadow.verification.update(added)
    if added:
        deps.journal.write("protected", files=sorted(added), why="collected by the project's pytest")
    data = imported_data_entries(deps.shadow.root, baseline.test_files, deps.shadow.verification)
    deps.shadow.verification.update(data)
    if data:
        deps.journal.write("protected", files=sorted(data), why="the values the tests import")
    return sorted({*added, *data})


def write_shadow_file(deps: RunDeps, rel: str, text: str | None) -> None:
    """Write (or, with None, remove) `rel` in the shadow as a change of this run."""
    deps.shadow.remember(rel)
    target = deps.shadow.resolve(rel)
    if text is None:
        target.unlink(missing_ok=True)
        return
    target.parent.mkdir(parents=True, exist_ok=True)
    write_exact(target, text)


def restore_goal_tests(deps: RunDeps) -> list[str]:
    """Put the goal tests back as written; one refused-edit line per file that differed."""
    notes = []
    for rel, text in deps.goal_tests.items():
        if deps.shadow.current(rel) != text:
            write_shadow_file(deps, rel, text)
            why = "the goal's tests judge this run; undone"
            deps.journal.write("tool_call", tool="guard_goal_tests", args={"path": rel}, result=why, ok=False)
            notes.append(f"- {rel}: {why}")
    return notes
