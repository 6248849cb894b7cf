"""Ochiai scoring, traceback boosts and the grouping of lines into suspicious functions."""

from __future__ import annotations

import math
from pathlib import Path

import pytest

from agent_core.models import TestFailure, TestReport
from agent_core.search.evidence.spectrum import (
    INNERMOST_BOOST,
    Suspect,
    combine,
    coverage_scores,
    is_candidate_file,
    ochiai,
    rank,
    traceback_scores,
)


@pytest.mark.parametrize("failed, passed, total_failed, expected", [
    (1, 0, 1, 1.0),  # run by the only failing test and nothing else
    (1, 1, 1, 1 / math.sqrt(2)),
    (2, 0, 4, 2 / math.sqrt(8)),
    (2, 6, 2, 2 / math.sqrt(16)),
    (0, 5, 1, 0.0),  # never run by a failing test
    (0, 0, 0, 0.0),
])
def test_ochiai(failed: int, passed: int, total_failed: int, expected: float):
    assert ochiai(failed, passed, total_failed) == pytest.approx(expected)


@pytest.mark.parametrize("rel, candidate", [
    ("pkg/core.py", True), ("calc.py", True), ("test_calc.py", False), ("conftest.py", False),
    ("tests/helpers.py", False), ("pkg/core_test.py", False), (".agentls/search/driver.py", False),
    ("README.md", False),
])
def test_only_code_a_fix_may_change_is_scored(rel: str, candidate: bool):
    assert is_candidate_file(rel) is candidate


SOURCE = "def good(x):\n    return x + 1\n\n\ndef bad(x):\n    y = x * 2\n    return y - 1\n"


def test_coverage_scores_rank_the_line_only_failing_tests_run(tmp_path: Path):
    (tmp_path / "m.py").write_text(SOURCE)
    files = {"m.py": {"t.py::test_good": [2], "t.py::test_bad": [6, 7], "t.py::test_both": [2, 6]},
             "test_m.py": {"t.py::test_bad": [10]}}
    outcomes = {"t.py::test_good": "passed", "t.py::test_bad": "failed", "t.py::test_both": "passed"}
    scores = coverage_scores(files, outcomes)
    assert scores == {("m.py", 7): 1.0, ("m.py", 6): pytest.approx(1 / math.sqrt(2))}
    suspects = rank(scores, tmp_path)
    assert [s.as_dict() for s in suspects] == [
        {"file": "m.py", "function": "bad", "start_line": 5, "end_line": 7, "lines": [7, 6], "score": 1.0}]


def test_the_line_every_failing_test_ran_outranks_where_some_of_them_crashed(tmp_path: Path):
    # `window` makes a bad value (line 2) that all three failing tests run, and so do two passing ones;
    # `use` (line 6) crashes on it in two of the three: the crash site is where the bug shows, not where it is.
    (tmp_path / "m.py").write_text("def window(xs):\n    return xs + [None]\n\n\ndef use(xs):\n    return sum(xs)\n")
    files = {"m.py": {"t::a": [2], "t::b": [2], "t::c": [2, 6], "t::d": [2, 6], "t::e": [2]}}
    outcomes = {"t::a": "failed", "t::b": "passed", "t::c": "failed", "t::d": "failed", "t::e": "passed"}
    crash = {("m.py", 6): INNERMOST_BOOST}
    scores = combine(coverage_scores(files, outcomes), crash)
    assert scores[("m.py", 2)] > scores[("m.py", 6)]
    assert rank(scores, tmp_path)[0].function == "window"
    one = coverage_scores({"m.py": {"t::a": [2, 6], "t::b": [2]}}, {"t::a": "failed", "t::b": "passed"})
    assert one[("m.py", 6)] > one[("m.py", 2)], "one failing test: plain Ochiai"


def test_tracebacks_boost_the_innermost_frame_and_stand_alone_without_coverage(tmp_path: Path):
    (tmp_path / "m.py").write_text(SOURCE)
    (tmp_path / "test_m.py").write_text("from m import bad\n\ndef test_bad():\n    assert bad(1) == 5\n")
    failure = TestFailure(
        nodeid="test_m.py::test_bad",
        file="test_m.py",
        line=4,
        message="boom",
        traceback="test_m.py:4: in test_bad\n    assert bad(1) == 5\nm.py:2: in good\nm.py:7: ZeroDivisionError",
        source_file="m.py",
        source_line=7,
    )
    boosts = traceback_scores(TestReport(failed=1, failures=[failure]), tmp_path)
    assert boosts == {("m.py", 2): 0.25, ("m.py", 7): 0.5}
    assert [(s.function, s.lines, s.score) for s in rank(boosts, tmp_path)] == [("bad", [7], 0.5), ("good", [2], 0.25)]
    combined = combine({("m.py", 6): 1.0, ("m.py", 7): 0.7}, boosts)
    assert rank(combined, tmp_path)[0].lines == [7, 6]


def test_module_level_lines_form_their_own_suspect_and_missing_files_are_skipped(tmp_path: Path):
    (tmp_path / "cfg.py").write_text("A = 1\nB = A / 0\n")
    suspects = rank({("cfg.py", 2): 0.9, ("cfg.py", 1): 0.3, ("gone.py", 4): 1.0}, tmp_path)
    assert [s.as_dict() for s in suspects] == [
        {"file": "cfg.py", "function": "", "start_line": 1, "end_line": 2, "lines": [2, 1], "score": 0.9}
    ]


def test_only_fix_runs_with_failing_tests_are_searched():
    from agent_core.pipeline.routers import after_baseline, after_search

    failing = TestReport(failed=1)
    passing = TestReport(passed=1)
    assert after_baseline({"kind": "fix", "baseline": failing}) == "search"
    assert after_baseline({"kind": "task", "baseline": failing}) == "plan"
    assert after_baseline({"kind": "fix", "baseline": passing}) == "finalize"
    assert after_search({"kind": "fix", "status": "fixed"}) == "finalize"
    assert after_search({"kind": "fix", "suspects": []}) == "plan"


def test_equally_suspicious_lines_try_the_likelier_bug_class_first(tmp_path: Path):
    from agent_core.search.driver.single_edit import candidates

    (tmp_path / "m.py").write_text("def f(xs, k):\n    n = len(xs) * 2\n    return n < k\n")
    suspects = rank({("m.py", 2): 1.0, ("m.py", 3): 1.0}, tmp_path)
    mutants = candidates(tmp_path, suspects, 100)
    assert (mutants[0].line, mutants[0].text) == (3, "    return n <= k"), (
        "a boundary on line 3 before line 2's constants"
    )
    clean = [m for m in mutants if not m.concerns]
    singles = [m for m in clean if m.end == 0]
    assert [m.tier for m in singles] == sorted(m.tier for m in singles), "single edits in bug-class order"
    assert clean == mutants[: len(clean)], "every clean candidate (templates included) before any with a concern"
    assert all(m.end == 0 for m in mutants[: len(singles)]), "the first single edits before the templates"
    assert len(candidates(tmp_path, suspects, 3)) == 3


def test_a_less_suspicious_line_waits_for_every_more_suspicious_line_of_any_function(tmp_path: Path):
    from agent_core.search.driver.single_edit import candidates

    # `outer` scores as its best line (4, run only by the failing test), its line 2 far less (every test runs
    # it); the nested `inner` has lines as suspicious as line 4: they come before line 2.
    (tmp_path / "m.py").write_text(
        "def outer(seq, n):\n    it = iter(seq)\n    def inner():\n        return n > 1\n    return inner()\n"
    )
    suspects = [Suspect("m.py", "outer", 1, 5, [5, 2], 1.0, [1.0, 0.4]),
                Suspect("m.py", "outer.inner", 3, 4, [4], 1.0, [1.0])]
    lines = [m.line for m in candidates(tmp_path, suspects, 100)]
    assert set(lines[: lines.index(2)]) == {5, 4}, "both 1.0 lines before the 0.4 one"


def test_a_big_suites_coverage_is_collected_on_the_failing_tests_neighbourhood():
    from agent_core.search.driver.localizing import neighbourhood

    assert neighbourhood(["tests/test_more.py::SlicedTests::test_odd", "tests/test_more.py::SlicedTests::test_even",
                          "tests/test_a.py::test_x[1-2]", "test_b.py::test_y"]) == [
        "tests/test_more.py::SlicedTests::test_odd", "tests/test_more.py::SlicedTests",
        "tests/test_more.py::SlicedTests::test_even", "tests/test_a.py::test_x[1-2]", "tests/test_a.py",
        "test_b.py::test_y", "test_b.py"]


def test_lines_past_the_ten_shown_are_still_searched(tmp_path: Path):
    from agent_core.search.driver.single_edit import candidates

    body = "".join(f"    v{i} = n + {i}\n" for i in range(12))
    (tmp_path / "m.py").write_text(f"def f(n):\n{body}    return v11 == 0\n")
    scores = {("m.py", line): 0.5 for line in range(2, 15)}  # thirteen equally suspicious lines
    (suspect,) = rank(scores, tmp_path)
    assert len(suspect.lines) == 10 and "more_lines" not in suspect.as_dict()
    assert 14 in {m.line for m in candidates(tmp_path, [suspect], 1000)}, "the return on line 14 is mutated too"


def test_a_condition_comes_right_after_the_branch_only_failing_tests_take(tmp_path: Path):
    from agent_core.search.evidence.spectrum import governing

    source = (
        "import sys\n\nif sys.version_info > (3,):\n    def f(xs, until):\n        for x in xs:\n"
        "            if x >= until:\n                return x\n        return None\n"
    )
    (tmp_path / "m.py").write_text(source)
    assert governing(source) == {7: 6}, "the return under its if; nothing of the def under the version check"
    # the return (line 7) runs only in the failing test; the condition (line 6) in every test
    scores = {("m.py", 7): 1.0, ("m.py", 6): 0.3, ("m.py", 5): 0.3}
    (suspect,) = rank(scores, tmp_path)
    assert suspect.lines[:2] == [7, 6] and suspect.line_scores[1] == pytest.approx(0.99)


def test_a_module_constant_a_suspicious_line_reads_becomes_a_suspect_below_it(tmp_path: Path):
    source = (
        'ABSOLUTE_ZERO_C = -237.15\nUNITS: dict = {\n    "c": 1,\n}\nSEEN = 1\nSEEN = 2\n\n\n'
        "def is_physical(celsius, unit='c'):\n    return celsius * UNITS[unit] >= ABSOLUTE_ZERO_C + SEEN\n"
    )
    (tmp_path / "physics.py").write_text(source)
    suspects = rank({("physics.py", 10): 1.0}, tmp_path)
    assert [(s.function, s.score) for s in suspects] == [("is_physical", 1.0), ("", 0.5)], \
        "covered by no test (it runs at import), the constant still comes after the line that reads it"
    assert suspects[1].lines == [1, 2, 3, 4], "each line of a definition, but not a name assigned twice (SEEN)"
    assert rank({("physics.py", 1): 1.0}, tmp_path)[0].lines == [1], "a line reading nothing adds nothing"


ERRORS = '''class TemplateError(Exception):
    def __init__(self, message):
        self.message = message


class SyntaxProblem(TemplateError):
    def __str__(self):
        return f"line 1: {self.message}"
'''
PARSER = '''from errors import SyntaxProblem


class Parser:
    def fail(self, message, lineno=None):
        lineno = lineno or 1
        raise SyntaxProblem(message)

    def block(self, name):
        if name != "end":
            self.fail("unknown block")
        return name

    def lookup(self, name):
        for known in ("a", "b"):
            if known == name:
                return known
        raise KeyError(name)
'''


def test_code_that_only_reports_an_error_comes_after_the_code_that_decided_to_raise(tmp_path: Path):
    (tmp_path / "errors.py").write_text(ERRORS)
    (tmp_path / "parser.py").write_text(PARSER)
    equal = {("errors.py", 3): 1.0, ("errors.py", 8): 1.0, ("parser.py", 6): 1.0, ("parser.py", 7): 1.0,
             ("parser.py", 10): 1.0, ("parser.py", 11): 1.0, ("parser.py", 18): 1.0}
    suspects = rank(equal, tmp_path)
    assert [(s.function, s.score) for s in suspects] == [
        ("Parser.block", 1.0), ("Parser.lookup", 1.0), ("TemplateError.__init__", 0.5),
        ("SyntaxProblem.__str__", 0.5), ("Parser.fail", 0.5)], \
        "the exception classes (a subclass of one too) and the helper that only raises, at half their score; " \
        "a function that may return before its last raise keeps its own"
    assert rank({("errors.py", 3): 1.0}, tmp_path)[0].score == 0.5, "still a suspect when nothing else is"
