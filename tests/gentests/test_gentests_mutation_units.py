"""Pure parts of gen-tests' mutation testing: which lines and mutants, how survivors read."""

from __future__ import annotations

import pytest

from agent_core.gentests.mutation import (
    MutantOutcome,
    MutationRun,
    block,
    select_mutants,
    statement_lines,
    survivor_text,
)
from agent_core.gentests.mutation_keep import MAX_SHOWN, _spread
from agent_core.search import Mutant
from lsp_server.convert import survivor_message

SOURCE = '''"""Module."""


def pick(xs, n):
    """Doc
    string."""
    if n < 0:
        return None
    return xs[n]


def other():
    return 1
'''


def test_statement_lines_skip_docstrings_and_stay_inside_the_spans():
    assert statement_lines(SOURCE, [(4, 9)]) == [4, 7, 8, 9]
    assert statement_lines(SOURCE, [(12, 13)]) == [12, 13]
    assert statement_lines("def broken(:\n", [(1, 1)]) == []


def test_select_mutants_spreads_over_lines_before_going_deeper():
    lines = statement_lines(SOURCE, [(4, 9)])
    two = select_mutants("m.py", SOURCE, lines, 2)
    assert [m.line for m in two] == [7, 9], "each line's first mutant before any line's second"
    every = select_mutants("m.py", SOURCE, lines, 500)
    assert all(m.tier <= 9 for m in every), "no wrong-variable or inserted-base-case mutants"
    assert len(every) == len({(m.line, m.text) for m in every})
    assert every == sorted(every, key=lambda m: (m.line, m.tier))


@pytest.mark.parametrize(("change", "message"), [
    ("`<` -> `<=`", "no test notices if `<` becomes `<=` here"),
    ("`xs` and `n` swapped", "no test notices here: `xs` and `n` swapped"),
    ("condition negated", "no test notices here: condition negated"),
])
def test_survivor_messages(change: str, message: str):
    assert survivor_message(change) == message


def test_block_counts_and_lists_survivors():
    a, b, c = (Mutant("m.py", line, "x", f"change {line}") for line in (7, 9, 13))
    run = MutationRun([MutantOutcome(a, True, {"t::x"}), MutantOutcome(b, True, {"t::y"}), MutantOutcome(c, False)])
    assert run.killed_by(["t::x"]) == {0}
    out = block("m.py", run, killed_before={0}, killed_after={0, 1})
    assert (out["mutants"], out["killed_before"], out["killed_after"], out["not_run"]) == (3, 1, 2, 1)
    assert out["survivors"] == [{"file": "m.py", "line": 13, "change": "change 13", "text": "x"}]


def test_the_follow_up_shows_one_survivor_per_line_before_a_lines_second():
    lines = [7, 7, 7, 8, 9, 9, 12, 13]
    run = MutationRun([MutantOutcome(Mutant("m.py", n, "x", f"m{k}"), True) for k, n in enumerate(lines)])
    alive = [0, 1, 2, 3, 4, 5, 6, 7]
    assert MAX_SHOWN == 4
    assert [lines[i] for i in _spread(run, alive)] == [7, 8, 9, 12]
    assert _spread(run, [0, 1, 2, 4]) == [0, 1, 2, 4], "few lines: the others fill up"


def test_a_survivor_on_a_line_no_test_runs_says_so_in_the_follow_up_prompt():
    mutant = Mutant("m.py", 7, "    if n <= 0:", "`<` -> `<=`")
    assert survivor_text(mutant, SOURCE) == "line 7: `if n < 0:` becomes `if n <= 0:` (`<` -> `<=`)"
    assert survivor_text(mutant, SOURCE, ran=False).endswith("(`<` -> `<=`; no test runs this line yet)")
