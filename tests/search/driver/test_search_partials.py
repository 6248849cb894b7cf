"""Partial fixes combined (driver/partials.py) and the driver's outcome per failing test they rest on.

The pool's rules on plain candidates; then a real bubblewrap sandbox: with `tests_of`, every failing test
runs for each candidate (hot, and the slow way for one a swap cannot express), a candidate that passes
none of them stops before its covering tests, and one that breaks a covering test stops there.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.search.candidate import Mutant
from agent_core.search.driver.partials import Hunk, Partials, combined, hunk
from agent_core.search.driver.sandboxed import try_mutants
from engine_support import shadowed

REPORT = ('PREFIX = "error "\n\n\ndef report(kind, n):\n    if kind == "error":\n        return PREFIX + str(n)\n'
          '    return "note " + str(n)\n\n\ndef other(n):\n    return n\n')
FAILING = ["test_report.py::test_error", "test_report.py::test_note"]
TESTS = ('from report import other, report\n\n\ndef test_error():\n    assert report("error", 1) == "failed: 1"\n'
         '\n\ndef test_note():\n    assert report("note", 2) == "note: 2"\n\n\n'
         'def test_other():\n    assert other(3) == 3\n')
ERROR = Mutant("report.py", 6, '        return "failed: " + str(n)', "error's message")
NOTE = Mutant("report.py", 7, '    return "note: " + str(n)', "note's message")


def test_a_hunk_leaves_out_the_lines_a_candidate_writes_back_unchanged():
    slot = Mutant("report.py", 7, '    if n < 0:\n        return ""\n    return "note " + str(n)', "a guard")
    assert hunk(slot, REPORT) == Hunk(6, 6, ('    if n < 0:', '        return ""')), "an insertion before line 7"
    assert hunk(NOTE, REPORT) == Hunk(6, 7, ('    return "note: " + str(n)',))
    assert hunk(Mutant("report.py", 7, '    return "note " + str(n)', "the same"), REPORT) is None


@pytest.mark.parametrize("a, b, clash", [
    (Hunk(5, 6, ("x",)), Hunk(6, 7, ("y",)), False),  # neighbouring lines
    (Hunk(5, 7, ("x",)), Hunk(6, 7, ("y",)), True),  # one line both replace
    (Hunk(6, 6, ("x",)), Hunk(6, 7, ("y",)), False),  # an insertion in front of a replaced line
    (Hunk(6, 6, ("x",)), Hunk(5, 7, ("y",)), True),  # an insertion inside replaced lines
    (Hunk(6, 6, ("x",)), Hunk(6, 6, ("y",)), True),  # two insertions at one place: which first is a guess
    (Hunk(3, 3, ("x",)), Hunk(6, 6, ("y",)), False),
])
def test_two_hunks_clash_where_both_cannot_be_made(a: Hunk, b: Hunk, clash: bool):
    assert a.clashes(b) is clash and b.clashes(a) is clash


def test_a_combination_makes_both_edits_from_the_first_changed_line_to_the_last():
    guard = Mutant("report.py", 6, '        if n < 0:\n            n = 0\n        return PREFIX + str(n)', "a guard")
    both = combined(guard, NOTE, [hunk(guard, REPORT), hunk(NOTE, REPORT)], REPORT)
    assert (both.line, both.last) == (6, 7)
    assert both.applied(REPORT).split("\n")[4:9] == [
        '    if kind == "error":', "        if n < 0:", "            n = 0", "        return PREFIX + str(n)",
        '    return "note: " + str(n)']
    assert both.description == "two edits: a guard; and note's message"


def test_two_partial_fixes_passing_different_failing_tests_are_tried_together_once():
    pool = Partials(FAILING, {"report.py": REPORT})
    wide = Mutant("report.py", 7, '    return "note:  " + str(n)', "passes nothing new")
    first = pool.after([(ERROR, "failed")], {id(ERROR): {FAILING[0]: "passed", FAILING[1]: "failed"}})
    assert first == [] and len(pool.kept) == 1
    combos = pool.after([(NOTE, "failed"), (wide, "failed")],
                        {id(NOTE): {FAILING[0]: "failed", FAILING[1]: "passed"},
                         id(wide): {FAILING[0]: "passed", FAILING[1]: "failed"}})
    assert len(combos) == 1, "the one that passes the same test as the first is no complement"
    assert combos[0].applied(REPORT) == ERROR.applied(NOTE.applied(REPORT))
    assert pool.parts[id(combos[0])] == (combos[0], ERROR, NOTE)
    again = pool.after([(Mutant(NOTE.path, NOTE.line, NOTE.text, "the same again"), "failed")],
                       {0: {}})  # outcomes unknown: not a partial fix
    assert again == []
    figures = pool.figures(lambda m: m.description, combos[0])
    assert figures == {"partials": 3, "made": 1, "tried": 0, "won": "error's message + note's message"}


@pytest.mark.parametrize("outcome, tests", [
    ("failed", {FAILING[0]: "passed", FAILING[1]: "failed", "test_report.py::test_other": "failed"}),  # broke one
    ("failed", {FAILING[0]: "failed", FAILING[1]: "failed"}),  # passed none
    ("timeout", {FAILING[0]: "passed", FAILING[1]: "timeout"}),
    ("passed", {FAILING[0]: "passed", FAILING[1]: "passed"}),  # a fix, not a partial one
], ids=["a covering test broken", "none passed", "cut by the bound", "all passed"])
def test_what_is_no_partial_fix(outcome: str, tests: dict[str, str]):
    assert Partials(FAILING, {"report.py": REPORT}).passed(outcome, tests) is None


def test_partial_fixes_of_two_files_or_at_one_line_are_not_combined():
    pool = Partials(FAILING, {"report.py": REPORT, "b.py": REPORT})
    elsewhere = Mutant("b.py", 7, NOTE.text, "in another file")
    same_line = Mutant("report.py", 6, '        return "failed:" + str(n)', "the error's line again")
    pool.after([(ERROR, "failed")], {id(ERROR): {FAILING[0]: "passed", FAILING[1]: "failed"}})
    combos = pool.after([(elsewhere, "failed"), (same_line, "failed")],
                        {id(elsewhere): {FAILING[1]: "passed"}, id(same_line): {FAILING[1]: "passed"}})
    assert combos == []


@pytest.fixture
def root(tmp_path: Path):
    with shadowed(tmp_path, {"report.py": REPORT, "test_report.py": TESTS}) as copy:
        yield copy


def _outcomes(sandbox, root: Path, mutants: list[Mutant], covering: bool) -> list[tuple[str, dict[str, str]]]:
    tests_of: dict[int, dict[str, str]] = {}
    results, _ = asyncio.run(try_mutants(
        sandbox, root, FAILING, mutants, mutant_timeout_s=10, budget_s=60, max_passing=5, hot=True,
        covering=(lambda m: ["test_report.py::test_other"]) if covering else None, tests_of=tests_of))
    return [(outcome, tests_of[id(m)]) for m, outcome in results]


@pytest.mark.e2e
def test_the_driver_says_which_failing_tests_each_candidate_passes(sandbox, root: Path):
    module_level = Mutant("report.py", 1, 'PREFIX = "failed: "', "the error's prefix")  # no swap: the slow way
    wrong = Mutant("report.py", 6, '        return "oops " + str(n)', "passes nothing")
    got = _outcomes(sandbox, root, [ERROR, NOTE, module_level, wrong], covering=True)
    other = "test_report.py::test_other"
    assert got[0] == ("failed", {FAILING[0]: "passed", FAILING[1]: "failed", other: "passed"}), \
        "the second failing test ran after the first passed, then the covering one"
    assert got[1] == ("failed", {FAILING[0]: "failed", FAILING[1]: "passed", other: "passed"}), \
        "the first failing test's failure did not stop the child"
    assert got[3] == ("failed", {FAILING[0]: "failed", FAILING[1]: "failed"}), \
        "no failing test passed: the covering test was not run"
    assert got[2] == got[0], "tried the slow way, the same outcome per test"
    both = Mutant("report.py", 6, ERROR.text + "\n" + NOTE.text, "both")
    broken = Mutant("report.py", 11, "    return n + 1", "passes no failing test, breaks test_other")
    fixed = _outcomes(sandbox, root, [both, broken], covering=False)
    assert fixed[0] == ("passed", {FAILING[0]: "passed", FAILING[1]: "passed"})
    assert fixed[1][0] == "failed"
    assert (root / "report.py").read_text() == REPORT
