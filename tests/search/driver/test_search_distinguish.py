"""The inputs that tell two versions of a function apart, and the rival's candidates and sentence (pure, no I/O)."""

from __future__ import annotations

import dataclasses

import pytest

from agent_core.models import TestReport as Report
from agent_core.search.candidate import Mutant
from agent_core.search.driver.call_inputs import calls_in, generated_inputs, shown, variations
from agent_core.search.driver.distinguish import (
    RivalSearch,
    drops,
    exits_early,
    function_at,
    function_text,
    gives_way,
    leaves_unused,
    rival_candidates,
    rival_sentence,
    shadows,
)

TESTS = '''
import pytest
import signs
from signs import both


def test_literal():
    assert both(1, 'a', key=[2, 3])
    assert signs.both(-1, None)


def test_not_literal(x):
    assert both(x, 1)
    assert both(*x)


@pytest.mark.parametrize("a, b", [(1, 2), (0, -3)])
def test_rows(a, b):
    assert both(a, b)


@pytest.mark.parametrize("n", [4, 5])
def test_one_name(n):
    assert both(n, n)
'''


def test_the_tests_literal_calls_are_read_with_their_parametrize_rows():
    calls = [shown("both", call) for call in calls_in(TESTS, "both")]

    assert calls == ["both(1, 'a', key=[2, 3])", "both(-1, None)", "both(1, 2)", "both(0, -3)", "both(4, 4)",
                     "both(5, 5)"], "a call with a name the test does not bind, or `*args`, is left out"


@pytest.mark.parametrize(("call", "expected"), [
    ((("3",), ()), ["f(4)", "f(2)", "f(0)", "f(-3)", "f(None)"]),
    ((("0",), ()), ["f(1)", "f(-1)", "f(None)"]),
    ((("'ab'",), ()), ["f('')", "f('bb')", "f(\"'ab'\")", "f('\"ab\"')", "f(None)"]),
    ((("[1, 2]",), ()), ["f([])", "f([1])", "f([2, 1])", "f([2, 2])", "f([0, 2])", "f([-1, 2])", "f([1, 3])",
                          "f([1, 1])", "f([1, 0])", "f([1, -2])", "f(None)"]),
    ((("['ab', 'c', 'd', 'e']",), ()), ["f([])", "f(['ab'])", "f(['e', 'd', 'c', 'ab'])", "f(['', 'c', 'd', 'e'])",
                                        "f(['bb', 'c', 'd', 'e'])", "f([\"'ab'\", 'c', 'd', 'e'])",
                                        "f(['\"ab\"', 'c', 'd', 'e'])", "f(['ab', '', 'd', 'e'])",
                                        "f(['ab', 'd', 'd', 'e'])", "f(['ab', \"'c'\", 'd', 'e'])",
                                        "f(['ab', '\"c\"', 'd', 'e'])", "f(['ab', 'c', '', 'e'])",
                                        "f(['ab', 'c', 'e', 'e'])", "f(['ab', 'c', \"'d'\", 'e'])",
                                        "f(['ab', 'c', '\"d\"', 'e'])", "f(None)"]),
    ((("True",), ()), ["f(False)", "f(None)"]),
    (((), (("k", "(1, 2)"),)), ["f(k=())", "f(k=(1,))", "f(k=(2, 1))", "f(k=(2, 2))", "f(k=(0, 2))", "f(k=(-1, 2))",
                                "f(k=(1, 3))", "f(k=(1, 1))", "f(k=(1, 0))", "f(k=(1, -2))", "f(k=None)"]),
])
def test_one_argument_is_varied_at_a_time(call, expected):
    assert [shown("f", varied) for varied in variations(call)] == expected


def test_generated_inputs_keep_the_tests_calls_first_each_once_and_stop_at_the_limit():
    calls = [(("1", "2"), ()), (("2", "2"), ())]
    generated = generated_inputs(calls)

    assert generated[:2] == calls and len(generated) == len(set(generated))
    assert (("0", "2"), ()) in generated and len(generated_inputs(calls, limit=3)) == 3


SOURCE = "import os\n\n\ndef f(a, b):\n    x = a\n    return x or b\n\n\nclass C:\n    def m(self):\n        return 1\n"


def test_the_function_of_a_line_and_whether_it_is_the_modules():
    node, top = function_at(SOURCE, 6)
    assert node is not None and node.name == "f" and top
    method, top = function_at(SOURCE, 11)
    assert method is not None and method.name == "m" and not top
    assert function_at(SOURCE, 1) == (None, False)
    assert function_text(SOURCE, 5) == "def f(a, b):\n    x = a\n    return x or b\n"


async def _never(_: Mutant) -> Report | None:
    return None


def test_rival_candidates_edit_the_winners_function_into_something_else():
    winner = Mutant("m.py", 6, "    return x and b", "`or` -> `and`")
    same = Mutant("m.py", 6, "    return (x and b)", "the same code, another spelling")
    other = Mutant("m.py", 5, "    x = b", "`a` -> `b`")
    elsewhere = Mutant("m.py", 11, "        return 2", "`1` -> `2`")
    other_file = Mutant("n.py", 6, "    return x and b", "`or` -> `and`")
    search = RivalSearch(winner, SOURCE, [same, other, elsewhere, other_file], ["t::a"], Report(), 2.0, None,
                         _never, 30.0, 0.0, [])

    assert rival_candidates(search) == [other]


FUNCTION = "def by_length(words):\n    return list(sorted(set(words, key=len)))\n"
DELETED = Mutant("w.py", 2, "    return list(sorted(set(words)))", "`set(words, key=len)` -> `set(words)`")
MOVED = Mutant("w.py", 2, "    return list(sorted(set(words), key=len))", "`key=len` moved to `sorted`")
SWAPPED = Mutant("w.py", 2, "    return list(sorted(set(len, key=words)))", "`words` <-> `len`")


def test_what_a_candidate_drops_of_its_function():
    assert drops(FUNCTION, DELETED) == ["`key=`", "`len`"]
    assert drops(FUNCTION, MOVED) == drops(FUNCTION, SWAPPED) == []
    assert drops(FUNCTION, Mutant("w.py", 2, "    return list(set(words, key=len))", "")) == ["`sorted`"]
    assert drops(FUNCTION, Mutant("w.py", 2, "    return list(sorted(set(words, key=len.real)))", "")) == []
    assert drops("x = f(a)\n", Mutant("w.py", 1, "x = 1", "")) == [], "outside a function: nothing is said"


def test_a_name_of_the_module_bound_inside_the_function_is_a_shadow():
    source = "import re\nLIMIT = 3\n\n\ndef words(line):\n    return re.findall('[a-z]+', line)\n\n\n" \
             "def count(lines):\n    n = 0\n    for line in lines:\n        n += len(words(line))\n    return n\n"
    local = Mutant("m.py", 10, "    words = re.compile('[a-zA-Z]+').findall\n    n = 0", "", end=10)
    assert shadows(source, local) == ["words"]
    assert shadows(source, Mutant("m.py", 10, "    re, LIMIT, n = 1, 2, 0", "")) == ["LIMIT", "re"]
    nested = Mutant("m.py", 10, "    def words(line):\n        return line.split()\n    n = 0", "", end=10)
    assert shadows(source, nested) == ["words"], "a nested def binds the name too"
    assert shadows(source, Mutant("m.py", 10, "    from re import findall as words\n    n = 0", "", end=10)) == \
        ["words"]
    assert shadows(source, Mutant("m.py", 10, "    n = LIMIT", "")) == [], "read, not bound"
    assert shadows(source, Mutant("m.py", 12, "        n += len(words(line.lower()))", "")) == []
    assert shadows(source, Mutant("m.py", 2, "words = 4", "")) == [], "outside a function"


TOTAL = ("def total(rows):\n    out = 0\n    for row in rows:\n        if row:\n            out += row\n"
         "    out = round(out, 2)\n")


@pytest.mark.parametrize("line, text, end, expected", [
    (5, "            out += row\n            return out", 5, ["a `return` inside a loop"]),  # the first row only
    (5, "            out += row\n            break", 5, ["a `break`"]),
    (4, "        if not row:\n            return 0\n        if row:", 4, ["a `return` inside a loop"]),
    (2, "    if not rows:\n        return 0\n    out = 0", 2, ["an early `return`"]),  # a guard before the work
    (6, "    out = round(out, 2)\n    return out", 6, []),  # the function's result, its last statement
    (5, "            out += row\n        else:\n            continue", 5, []),  # the loop goes on
    (6, "    def inner():\n        return 1\n        return 2\n    out = round(out, 2)", 6, []),  # its own exits
])
def test_an_exit_after_which_more_of_the_function_would_have_run_is_early(line, text, end, expected):
    assert exits_early(TOTAL, Mutant("t.py", line, text, "", end=end)) == expected
    assert exits_early("x = f(a)\n", Mutant("t.py", 1, "x = 1\nraise SystemExit", "")) == [], "outside a function"
    early = "def f(x):\n    if x:\n        return 1\n    return 2\n"
    assert exits_early(early, Mutant("t.py", 3, "        return 3", "")) == [], "as many early exits as before"


SUMMARY = ("def _numbers(lines):\n    for line in lines:\n        yield float(line)\n\n\n"
           "class Stats:\n    def _mean(self, values):\n        return sum(values) / len(values)\n\n"
           "    def mean(self, lines):\n        values = list(_numbers(lines))\n        return self._mean(values)\n\n"
           "    def _again(self, n):\n        return self._again(n - 1) if n else 0\n")


@pytest.mark.parametrize("line, text, expected", [
    (11, "        values = [float(line) for line in lines]", ["_numbers"]),  # the helper written out again
    (12, "        return sum(values) / len(values)", ["_mean"]),  # a method's body inlined
    (11, "        values = list(_numbers(lines)) or [0.0]", []),  # still called
    (11, "        values = list(_numbers(lines)", []),  # does not parse: not judged
    (15, "        return 0", []),  # `_again` named only inside itself before: not the module's use of it
])
def test_a_fix_that_leaves_a_function_of_the_module_unused_is_told(line, text, expected):
    assert leaves_unused(SUMMARY, Mutant("m.py", line, text, "")) == expected


def test_a_winner_that_drops_code_gives_way_to_a_rival_that_keeps_it_all():
    assert gives_way(FUNCTION, DELETED, MOVED) == ["`key=`", "`len`"]
    assert gives_way(FUNCTION, MOVED, DELETED) == [], "the winner keeps everything"
    assert gives_way(FUNCTION, DELETED, Mutant("w.py", 2, "    return list(set(words))", "")) == [], \
        "the rival drops code too"
    assert gives_way(FUNCTION, DELETED, dataclasses.replace(MOVED, concerns=("leaves `x` unused",))) == [], \
        "a rival with a concern of its own"
    assert gives_way(FUNCTION, Mutant("w.py", 2, "    return list(sorted(set(words, key=abs)))", ""), MOVED) == \
        [], "a name swapped for another is no deletion"
    swapped = Mutant("w.py", 2, "    return isinstance(node, str)", "")
    assert drops("def f(node):\n    return isString(node)\n", swapped) == [], \
        "a call swapped for another, with as much code: nothing dropped"
    assert drops("def f(t):\n    t = round(t, 2)\n", Mutant("w.py", 2, "    return t", "")) == \
        ["`round`", "a use of `t`"], "what is left fewer times is said so"


@pytest.mark.parametrize(("rival", "sentence"), [
    ({"description": "`a(x, k=1)` -> `a(x)`", "differs_on": "f([2])", "winner_gives": "2", "rival_gives": "1",
      "given_up": ["`a`", "`k=`"]},
     "Another edit also passes the tests: `a(x, k=1)` -> `a(x)`, but it drops `a`, `k=` from the function; this fix "
     "keeps them and was chosen in its place; they differ on `f([2])`: this fix gives 2, the other 1."),
    (None, ""),
    ({"description": "`a` -> `b`", "differs_on": "f(0, 2)", "winner_gives": "False", "rival_gives": "True"},
     "Another edit also passes the tests: `a` -> `b`; they differ on `f(0, 2)`: this fix gives False, the other True."),
    ({"description": "`a` -> `b`", "differs_on": None, "inputs": 12},
     "Another edit also passes the tests: `a` -> `b`; none of 12 generated inputs told them apart."),
    ({"description": "`a` -> `b`", "differs_on": None, "not_compared": "a method"},
     "Another edit also passes the tests: `a` -> `b` (not compared: a method)."),
])
def test_the_rival_in_one_sentence(rival, sentence):
    assert rival_sentence(rival) == sentence
