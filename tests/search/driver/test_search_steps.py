"""Steps (driver/steps.py): a candidate after which a failing test fails further on, and the search on top of it.

The rules on plain figures; the driver's reach in a real bubblewrap sandbox (the failing test's own line
with no candidate and after each, hot and the slow way); `agentls fix` on a bug of two edits behind one
failing test, which no single edit and no pair of partial fixes can fix.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.search.candidate import Mutant
from agent_core.search.driver import on_top
from agent_core.search.driver import steps as steps_module
from agent_core.search.driver.on_top import suspects_on_top
from agent_core.search.driver.sandboxed import Reached, try_mutants
from agent_core.search.driver.steps import KEPT, PASSED_GAIN, StatementEnds, Steps, places_on_top, step_gain
from agent_core.search.evidence.spectrum import Suspect
from engine_support import journal_records, make_project, shadowed

FAILING = ["test_a.py::test_one", "test_a.py::test_two"]


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")


A = "AssertionError"


@pytest.mark.parametrize("outcome, reach, tests, gain", [
    ("failed", {FAILING[0]: (14, A)}, None, 4),  # one test further on, the other not seen (the driver stopped first)
    ("failed", {FAILING[0]: (14, A), FAILING[1]: (20, A)}, None, 4),
    ("failed", {FAILING[0]: (12, A), FAILING[1]: (22, A)}, None, 4),  # both further on
    ("failed", {FAILING[1]: (21, A)}, {FAILING[0]: "passed", FAILING[1]: "failed"}, PASSED_GAIN + 1),
    ("failed", {FAILING[0]: (14, A), FAILING[1]: (19, A)}, None, None),  # the other one fails earlier than before
    ("failed", {FAILING[0]: (14, "TypeError")}, None, 4),  # further on, another way: a later check's own error
    ("failed", {FAILING[0]: (10, A), FAILING[1]: (20, A)}, None, None),  # nothing moved
    ("failed", {FAILING[0]: (14, A)}, {FAILING[0]: "failed", "test_a.py::test_other": "failed"}, None),  # broke one
    ("passed", {}, None, None),  # a fix, no step
    ("timeout", {FAILING[0]: (14, A)}, None, None),
], ids=["further", "one of two further", "both further", "one passed", "one earlier", "another exception further",
        "none moved", "another test broken", "passed", "cut"])
def test_what_is_a_step_and_how_far(outcome: str, reach: dict[str, tuple[int, str]], tests: dict[str, str] | None,
                                    gain: int | None):
    assert step_gain(FAILING, outcome, {FAILING[0]: (10, A), FAILING[1]: (20, A)}, reach, tests) == gain


WITH_BLOCK = ("import pytest\n\n\ndef test_key():\n    with pytest.raises(ValueError):\n        a = 1\n"
              "        render(a)\n    assert render(2) == 2\n")


def test_a_failure_inside_the_statement_the_test_failed_in_is_no_step(tmp_path: Path):
    """On Python 3.10 and later a `pytest.raises` that saw nothing fails at its `with` line: another exception
    raised inside the block comes from a later line, and is no step; one past the block is."""
    (tmp_path / "test_w.py").write_text(WITH_BLOCK)
    ends = StatementEnds(tmp_path)
    test = ["test_w.py::test_key"]
    assert (ends(test[0], 5), ends(test[0], 7), ends(test[0], 8), ends("test_w.py::test_key", 99)) == (7, 7, 8, 99)
    before = {test[0]: (5, "Failed")}
    assert step_gain(test, "failed", before, {test[0]: (7, "TypeError")}, ends=ends) is None
    assert step_gain(test, "failed", before, {test[0]: (7, "TypeError")}) == 2, "line by line, it would be one"
    assert step_gain(test, "failed", before, {test[0]: (8, A)}, ends=ends) == 3
    assert StatementEnds(tmp_path)("nowhere.py::test", 4) == 4, "a file that cannot be read: the line itself"


def test_a_candidate_passing_some_failing_tests_is_left_to_the_partial_fixes_when_they_are_combined():
    made = Mutant("a.py", 3, "    x = 1", "passes one")
    reached = Reached({t: (10, A) for t in FAILING}, {id(made): {FAILING[1]: (20, A)}})
    tests = {id(made): {FAILING[0]: "passed", FAILING[1]: "failed"}}
    assert Steps(FAILING).note([(made, "failed")], reached, tests) == 1
    assert Steps(FAILING, partials=True).note([(made, "failed")], reached, tests) == 0


def test_the_furthest_steps_are_kept_and_each_searched_on_top_of_once():
    steps = Steps(["t.py::test"])
    made = [Mutant("a.py", 3, f"    x = {n}", f"edit {n}") for n in range(KEPT + 2)]
    reached = Reached({"t.py::test": (10, A)}, {id(m): {"t.py::test": (11 + n % 3, A)} for n, m in enumerate(made)})
    assert steps.note([(m, "failed") for m in made], reached) == KEPT + 2
    assert len(steps.kept) == KEPT and [s.gain for s in steps.kept] == [3, 3, 2, 2]
    assert [s.mutant.description for s in steps.kept] == ["edit 2", "edit 5", "edit 1", "edit 4"], \
        "the furthest first, the first found first among equals"
    first, second = steps.next(), steps.next()
    assert first is not None and second is not None and first.mutant is made[2] and second.mutant is made[5]
    assert steps.figures(None)["explored"] == [
        {"step": "edit 2", "gain": 3, "model": False, "fails_at": 13, "raised": A},
        {"step": "edit 5", "gain": 3, "model": False, "fails_at": 13, "raised": A}]
    assert steps.found == KEPT + 2


SOURCE = "\n".join([
    "import os",  # 1
    "",  # 2
    "def f(x):",  # 3
    "    a = x",  # 4
    "    # a comment",  # 5
    "    if a:",  # 6
    "        b = 1",  # 7
    "    c = 2",  # 8
    "    return a",  # 9
    "",  # 10
    "def g():",  # 11
    "    return 3",  # 12
])


def test_on_top_of_a_step_the_lines_it_sent_the_tests_to_come_first_then_its_function_nearest_first():
    step = Mutant("m.py", 6, "    if a and x:\n        a = 0", "a clause and a line")  # one line becomes two
    stepped = step.applied(SOURCE)
    places = [("m.py", 12), ("m.py", 6), ("m.py", 4), ("n.py", 2)]
    got = places_on_top(step, stepped, places, {"m.py": {10}, "n.py": {5}})
    assert got == [("m.py", 10),  # the line the step sent the tests to (lines 6-7 are the step's own)
                   ("m.py", 8), ("m.py", 4), ("m.py", 9), ("m.py", 3),  # the function's code, the nearest first
                   ("n.py", 5),  # another file's newly run line
                   ("m.py", 13), ("n.py", 2)]  # the ranked places: one after the step a line down, its own left out


REACH_CODE = "def span(xs):\n    lo = max(xs)\n    hi = min(xs)\n    return hi - lo\n"
REACH_TESTS = ("from reach import span\n\n\ndef test_span():\n    xs = [3, 1, 2]\n    assert max(xs) == 3\n"
               "    assert span([5]) == 0\n    assert span(xs) == 2\n    assert span([1, 9]) == 8\n"
               "    assert span([]) == 0\n")
SPAN = ["test_reach.py::test_span"]


@pytest.mark.e2e
@pytest.mark.parametrize("hot", [True, False], ids=["hot", "the slow way"])
def test_the_driver_says_where_the_failing_test_failed_before_and_after_each_candidate(sandbox, tmp_path: Path,
                                                                                      hot: bool):
    swapped = Mutant("reach.py", 4, "    return lo - hi", "the subtraction turned")
    halfway = Mutant("reach.py", 4, "    return lo - hi if len(xs) == 3 else hi - lo", "turned for three")
    broken = Mutant("reach.py", 2, "    lo = max(xs) + 1", "off by one")
    with shadowed(tmp_path, {"reach.py": REACH_CODE, "test_reach.py": REACH_TESTS}) as root:
        reached = Reached()
        results, _ = asyncio.run(try_mutants(sandbox, root, SPAN, [swapped, halfway, broken], mutant_timeout_s=10,
                                             budget_s=60, max_passing=1, hot=hot, reached=reached))
    assert [outcome for _, outcome in results] == ["failed", "failed", "failed"]
    assert reached.baseline == {SPAN[0]: (8, A)}, "without a candidate `span(xs) == 2` fails (it is -2)"
    assert reached.of[id(halfway)] == {SPAN[0]: (9, A)}, "right for three numbers, wrong for two: a line on"
    assert reached.of[id(swapped)] == {SPAN[0]: (10, "ValueError")}, \
        "the turned subtraction passes two checks, then `max` of nothing raises"
    assert reached.of[id(broken)] == {SPAN[0]: (7, A)}, "off by one fails the first call already"
    ends = StatementEnds(tmp_path)  # the project the shadow copied
    assert step_gain(SPAN, "failed", reached.baseline, reached.of[id(halfway)], ends=ends) == 1
    assert step_gain(SPAN, "failed", reached.baseline, reached.of[id(swapped)], ends=ends) == 2, \
        "further on, another way"
    assert step_gain(SPAN, "failed", reached.baseline, reached.of[id(broken)], ends=ends) is None


ORDER = {  # two wrong bounds behind one failing test: each bound's edit alone moves its failure on (a step)
    "clamp.py": (
        "def clamp(x, lo, hi):\n    if x < lo:\n        return hi\n    if x > hi:\n        return lo\n    return x\n"
    ),
    "test_clamp.py": (
        "from clamp import clamp\n\n\ndef test_clamp():\n    assert clamp(3, 0, 5) == 3\n"
        "    assert clamp(-1, 0, 5) == 0\n    assert clamp(9, 0, 5) == 5\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}


@pytest.mark.e2e
def test_a_bug_of_two_edits_behind_one_test_is_fixed_on_top_of_a_step(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", ORDER)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"]["description"] == "two edits: `hi` -> `lo`; then `lo` -> `hi`"
    assert search["steps"]["found"] >= 1 and search["steps"]["won"].startswith("`hi` -> `lo` (+1)")
    assert search["steps"]["explored"][0]["step"] == "`hi` -> `lo`"
    assert "combined" not in search and "partial_fixes" not in search or not search.get("partial_fixes"), \
        "one failing test: no partial fixes to combine or pair"
    assert (project / "clamp.py").read_text() == ORDER["clamp.py"].replace(
        "return hi", "return @").replace("return lo", "return hi").replace("return @", "return lo")


@pytest.mark.e2e
def test_without_steps_that_bug_is_not_fixed_by_the_search(tmp_path: Path, scripted_llm, run_fix,
                                                          monkeypatch: pytest.MonkeyPatch):
    """The same bug with no step kept: no edit of the search's passes (the run goes to the model, scripted to
    answer nothing useful)."""
    monkeypatch.setattr(steps_module, "KEPT", 0)
    project = make_project(tmp_path / "proj", ORDER)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1")

    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"] is None and search["steps"]["found"] >= 1 and search["steps"]["explored"] == []
    assert search["tried"] == search["mutants"], "every single edit was tried, none passed"


ORDER_FIX = {
    "edits": [{"path": "clamp.py", "search": "        return hi\n    if x > hi:\n        return lo",
               "replace": "        return lo\n    if x > hi:\n        return hi"}],
    "explanation": "each bound returned on its own side",
}


@pytest.mark.e2e
def test_a_step_with_nothing_on_top_leaves_the_shadow_as_it_was(tmp_path: Path, scripted_llm, run_fix,
                                                               monkeypatch: pytest.MonkeyPatch):
    """With no line near the step searched (the second bound's line never ran before the step: it is no suspect),
    nothing passes on top; the run goes on to the model, and the change is the model's alone."""
    monkeypatch.setattr(on_top, "NEAR_LINES", 0)
    scripted_llm.add("coder", ORDER_FIX)
    project = make_project(tmp_path / "proj", ORDER)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert run.json["found_by"] == "model"
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"] is None and search["steps"]["explored"] and search["steps"]["tried"] > 0
    assert search["steps"]["newly_run"] >= 1, "the second bound's `return` ran once the first was right"
    assert (project / "clamp.py").read_text() == ORDER["clamp.py"].replace(
        "return hi", "return @").replace("return lo", "return hi").replace("return @", "return lo"), \
        "the model's edit made on the original: no step left behind"


def test_the_search_s_own_candidates_on_top_of_a_step_begin_near_it():
    step = Mutant("m.py", 6, "    if a and x:\n        a = 0", "a clause and a line")
    spectrum = Suspect("m.py", "f", 3, 9, [6, 9, 4], 0.9, [0.9, 0.5, 0.2])
    got = suspects_on_top(step, step.applied(SOURCE), [spectrum], {"m.py": {10}})
    near = got[0].searched()
    assert [line for line, _ in near] == [10, 8, 4, 9, 3], "the newly run line, then the function's nearest lines"
    assert [score for _, score in near] == sorted((score for _, score in near), reverse=True)
    assert min(score for _, score in near) > 0.9, "above every localized line"
    assert got[1].searched() == [(10, 0.5), (4, 0.2)], "the localized lines moved past the step, its own left out"
