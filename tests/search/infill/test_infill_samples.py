"""A hole's samples as candidates: cut at the hole, re-indented, spliced, unparsable and repeated ones dropped."""

from __future__ import annotations

import pytest

from agent_core.search.infill.holes import holes_at
from agent_core.search.infill.samples import INFILL_TIER, Sampler, dead_statements, fit, fit_done, sample_plan

SOURCE = """def total(items, scale):
    out = 0
    for item in items:
        out += item * scale
    return out
"""


def _hole(line: int, kind: str):
    return next(h for h in holes_at("calc.py", SOURCE, line) if h.kind == kind)


def test_a_middle_is_reindented_to_the_hole_and_cut_where_it_leaves_the_block():
    hole = _hole(4, "line")
    assert fit(hole, "  out += item\n") == ["        out += item"], "re-indented from the sample's own indentation"
    assert fit(hole, "out += item\n    return out\n") == ["        out += item"], "stops at the code after the hole"
    assert fit(hole, "        out += item\n    return out * 2\n") == ["        out += item"], "left the for loop"
    assert fit(hole, "\n\n        if item:\n            out += item\n        x = 1\n") == [
        "        if item:", "            out += item"], "blank lines dropped; at most one line more than the hole"
    assert fit(hole, "   \n") == []


def test_the_comments_a_sample_adds_are_dropped_and_the_hole_s_own_kept():
    hole = _hole(4, "line")
    assert fit(hole, "out += item  # correct line\n") == ["        out += item"], "echoes the `# buggy line:` above it"
    assert fit(hole, "# the fix\nout += item\n# scaled below\n") == ["        out += item"]
    assert fit(hole, "out += '#' + item\n") == ["        out += '#' + item"], "a `#` in a string is no comment"
    commented = "def f(a):\n    a = a + 1  # one more\n    return a\n"
    own = next(h for h in holes_at("f.py", commented, 2) if h.kind == "line")
    assert fit(own, "a = a + 2  # one more\n") == ["    a = a + 2  # one more"], "the line's own comment stays"


def test_a_sample_is_done_once_its_complete_lines_hold_all_that_fit_keeps():
    hole = _hole(4, "line")  # a one-line hole takes at most two lines
    assert not fit_done(hole, "        out += item"), "the first line may still grow"
    assert not fit_done(hole, "        out += item\n"), "a second line may still come"
    assert not fit_done(hole, "        out += item\n        if"), "the second line is not complete yet"
    assert fit_done(hole, "        out += item\n        out -= 1\n"), "the hole's limit is reached"
    assert fit_done(hole, "        out += item\n    return out\n"), "it left the for loop"
    assert fit_done(hole, "        out += item\n    return"), "a shallower line is not in the hole however it ends"
    slot = _hole(4, "before")
    assert not fit_done(slot, "if item is None:\n    continue\n"), "a slot takes a third line"
    for text in ("        out += item\n        out -= 1\n        more\n", "        out += item\n    return out\n  x"):
        done = next(i for i in range(len(text) + 1) if fit_done(hole, text[:i]))
        assert fit(hole, text[:done]) == fit(hole, text), "cut where done, the sample makes the same lines"


def test_a_slot_takes_a_guard_and_a_header_hole_no_body():
    slot = _hole(4, "before")
    assert fit(slot, "if item is None:\n    continue\nout += item * scale\n") == [
        "        if item is None:", "            continue"]
    header = _hole(3, "line")
    assert fit(header, "    for item in reversed(items):\n        out += item\n") == [
        "    for item in reversed(items):"]


def test_samples_become_mutants_spliced_deduplicated_and_parsed():
    hole = _hole(4, "line")
    sampler = Sampler(hole, SOURCE)
    first = sampler.add("        out += item * scale ** 2\n")
    assert first is not None and first.tier == INFILL_TIER and (first.line, first.last) == (4, 4)
    assert first.description == "model infill at line 4 (line): out += item * scale ** 2"
    assert "out += item * scale ** 2\n    return out" in first.applied(SOURCE)
    assert sampler.add("out+=item*scale**2") is None, "the same code written differently is one candidate"
    assert sampler.add("        out += item * scale\n") is None, "the original line is no candidate"
    assert sampler.add("        out += (item *\n") is None, "does not parse"
    assert sampler.add("        out = out + item * scale ** 2  # again\n") is not None
    assert len(sampler.mutants) == 2


def test_a_sample_cut_at_its_token_limit_keeps_its_whole_lines():
    mutant = Sampler(_hole(4, "line"), SOURCE).add("        out += item * scale ** 2\n        out += (ite")
    assert mutant is not None and mutant.text == "        out += item * scale ** 2", "the unparsable last line dropped"
    slot = Sampler(_hole(4, "before"), SOURCE).add("if item is None:\n    continue\nif item")
    assert slot is not None
    assert slot.text == "        if item is None:\n            continue\n        out += item * scale"


def test_a_sample_after_which_a_statement_can_never_run_is_no_candidate():
    assert dead_statements(SOURCE) == 0
    assert dead_statements("def f(x):\n    return x\n    x += 1\n    print(x)\n") == 2
    assert dead_statements("for x in y:\n    if x:\n        break\n    else:\n        continue\n") == 0
    assert dead_statements("def f(:\n") == 0

    before = Sampler(_hole(5, "before"), SOURCE)
    assert before.add("    return out * scale\n") is None, "the line after it left behind, dead: the line's own " \
        "hole's replacement"
    assert before.add("    if scale < 0:\n        return -out\n") is not None, "a guard leaves the line running"
    line = Sampler(_hole(2, "line"), SOURCE)
    assert line.add("    return 0\n") is None, "the rest of the function left behind: it does less"
    assert before.dead == 1 and line.dead == 1
    dead = "def f(x):\n    return x\n    x += 1\n"
    assert Sampler(next(h for h in holes_at("d.py", dead, 2) if h.kind == "line"), dead).add(
        "    return x + 1\n") is not None, "dead code that was there before is not held against a sample"


def test_slot_mutants_join_the_anchor_line():
    after = Sampler(_hole(2, "after"), SOURCE).add("    scale = scale or 1\n")
    assert after is not None and (after.line, after.last) == (2, 2)
    assert after.text == "    out = 0\n    scale = scale or 1"
    assert after.description == "model infill after line 2: scale = scale or 1"
    lines = after.applied(SOURCE).splitlines()
    assert lines[1:4] == ["    out = 0", "    scale = scale or 1", "    for item in items:"]


@pytest.mark.parametrize("samples", [1, 2, 12])
def test_the_sample_plan_spreads_temperatures_and_seeds(samples):
    plan = sample_plan(samples, seed=7)
    assert len(plan) == samples and plan[0] == (0.2, 7)
    assert len({seed for _, seed in plan}) == samples
    if samples > 1:
        assert plan[-1][0] == 1.0 and [t for t, _ in plan] == sorted(t for t, _ in plan)


def test_a_hole_of_several_lines_may_come_back_up_to_twice_as_long():
    source = "def first(items, key):\n    for item in items:\n        if item == key:\n            return item\n" \
             "    return None\n"
    block = next(h for h in holes_at("find.py", source, 2) if h.kind == "block")
    assert block.size == 3
    middle = ("    for item in items:\n        if item is None:\n            continue\n        if item == key:\n"
              "            return item\n        seen = item\n        more = 2\n")
    assert fit(block, middle) == [line for line in middle.split("\n") if line][:6], \
        "a rewrite may add a guard around the lines it replaces: up to 2n lines for a hole of n"


WRAPPED = """def setters(a, lines, name):
    if a.init:
        lines.append(fmt_setter(name))
    rv = cf(
        [x for x in a]
    )
    return lines
"""


def test_a_one_line_hole_takes_a_statement_the_model_wraps_over_several_lines():
    hole = next(h for h in holes_at("setters.py", WRAPPED, 3) if h.kind == "line")
    answer = ("        lines.append(\n            fmt_setter_with_type(\n                name, a.type\n"
              "            )\n        )\n        lines.append(name)\n        more(name)\n    return lines\n")
    assert fit(hole, answer) == answer.split("\n")[:6], "one statement of five lines, one more: the hole's limit"
    mutant = Sampler(hole, WRAPPED).add(answer)
    assert mutant is not None and "fmt_setter_with_type(\n                name, a.type" in mutant.applied(WRAPPED)
    wrapped = answer[: answer.index("        lines.append(name)")]
    assert not any(fit_done(hole, wrapped[:i]) for i in range(len(wrapped) - 1)), \
        "the stream goes on while the statement's brackets are open"
    assert fit_done(hole, answer[: answer.index("        more")] + "        m"), "two statements: the limit"
    assert fit_done(hole, "        lines.append(\n            name)\n    r"), "a shallower statement left the block"


def test_a_line_that_is_part_of_a_statement_still_takes_lines():
    hole = next(h for h in holes_at("setters.py", WRAPPED, 4) if h.kind == "line")
    assert hole.original == "    rv = cf("
    assert fit(hole, "    rv = cf(*\n        [y for y in a]\n    )\n") == ["    rv = cf(*", "        [y for y in a]"], \
        "the code after the hole closes the bracket: a line and one more, not the statement"


def test_a_statement_hole_of_several_lines_takes_as_many_statements_as_it_had_lines():
    hole = next(h for h in holes_at("setters.py", WRAPPED, 4) if h.kind == "statement")
    assert (hole.first, hole.last) == (4, 6)
    rewrite = ("    items = [x for x in a]\n    try:\n        rv = cf(items)\n    except TypeError:\n"
               "        rv = cf(*items)\n    return lines\n")
    assert fit(hole, rewrite) == rewrite.split("\n")[:5], "five statements for a hole of three lines (up to six)"


GUARDED = """def width(word, least, most):
    if most == 0:  # no upper bound
        return "+"
    return str(most)
"""


def test_a_clause_is_put_between_the_kept_parts_of_its_line_less_the_header_s_colon_it_wrote_again():
    hole = next(h for h in holes_at("word.py", GUARDED, 2) if h.kind == "and")
    assert fit(hole, "least == 1:\n        return") == ["    if most == 0 and least == 1:  # no upper bound"], \
        "the model closed the header itself: its `:` is not written twice, and the body after it is not kept"
    assert fit(hole, "  least == 1") == ["    if most == 0 and least == 1:  # no upper bound"]
    assert fit(hole, "if most == 0 and least == 1:") == ["    if most == 0 and least == 1:  # no upper bound"], \
        "a chat answer with the whole line"
    assert fit(hole, "\n") == [] and fit(hole, ":") == []
    inline_body = "def f(a, b):\n    if a: return b\n    return a\n"
    body = next(h for h in holes_at("f.py", inline_body, 2) if h.kind == "and")
    assert fit(body, "b > 0:") == ["    if a and b > 0: return b"], "its `:` before a body on the same line"
    assert not fit_done(hole, "least == ") and fit_done(hole, "least == 1:\n"), "one line: done at its end"


def test_a_clause_s_samples_become_one_line_mutants_and_a_broken_clause_none():
    hole = next(h for h in holes_at("word.py", GUARDED, 2) if h.kind == "and")
    sampler = Sampler(hole, GUARDED)
    mutant = sampler.add("least == 1:")
    assert mutant is not None and (mutant.line, mutant.last, mutant.tier) == (2, 2, INFILL_TIER)
    assert mutant.applied(GUARDED).split("\n")[1] == "    if most == 0 and least == 1:  # no upper bound"
    assert mutant.description == "model infill at line 2: and least == 1"
    assert sampler.add("least==1") is None, "the same tree"
    assert sampler.add("least == (1:") is None, "does not parse"
    assert sampler.add("least > 1") is not None and len(sampler.mutants) == 4, "each with its clause negated"


STAMPED = "import datetime as dt\n\n\ndef stamp(value):\n    return dt.datetime.fromtimestamp(value).date()\n"


def test_an_argument_is_put_before_the_kept_closing_bracket_less_the_bracket_it_wrote_again():
    hole = next(h for h in holes_at("stamp.py", STAMPED, 5) if h.kind == "arg")
    assert hole.head == "    return dt.datetime.fromtimestamp(value).date(" and hole.tail == ")", "an empty call"
    first = next(h for h in holes_at("stamp.py", STAMPED.replace(".date()", ""), 5) if h.kind == "arg")
    want = ["    return dt.datetime.fromtimestamp(value, tz=dt.timezone.utc)"]
    assert fit(first, "tz=dt.timezone.utc)\n") == want, "the call closed by the model: its `)` is not written twice"
    assert fit(first, "tz=dt.timezone.utc") == want
    sampler = Sampler(first, STAMPED.replace(".date()", ""))
    mutant = sampler.add("tz=dt.timezone.utc)")
    assert mutant is not None and mutant.description == "model infill at line 5: arg tz=dt.timezone.utc"
    assert sampler.add("tz = dt.timezone.utc") is None, "the same tree"
    assert sampler.add("tz=(") is None, "does not parse"


TWINS = """class Word:
    def __init__(self, chars, min=1, max=0):
        self.min = min
        if chars == "a":
            if max == 0:
                self.pattern = "+"
        else:
            if max == 0:
                self.pattern = "*"
        self.min = min

    def parse(self, text):
        return text


def other(max):
    if max == 0:
        return 1
"""


def test_a_line_s_twins_are_its_copies_in_its_own_function():
    from agent_core.search.twins import twin_lines
    assert twin_lines(TWINS, 5) == [8], "the other `if max == 0:` of the method, not the one of `other`"
    assert twin_lines(TWINS, 8) == [5]
    assert twin_lines(TWINS, 3) == [10], "an assignment's copy"
    assert twin_lines(TWINS, 13) == [], "`return text` has one name: no twins"
    assert twin_lines(TWINS, 17) == [], "alone in its function"
    methods = "class A:\n    def f(self):\n        self.n += 1\n\n    def g(self):\n        self.n += 1\n"
    assert twin_lines(methods, 3) == [], "a copy in another method is not a twin"
    nested = "def f(a):\n    a.n += 1\n    def g(a):\n        a.n += 1\n    a.n += 1\n"
    assert twin_lines(nested, 2) == [5] and twin_lines(nested, 4) == [], "a nested function's lines are its own"
    assert twin_lines("a.n += 1\na.n += 1\n", 1) == [], "module-level code has none"
    boilerplate = "def f(a):\n" + "    a.x = 1\n" * 5
    assert twin_lines(boilerplate, 2) == [], "more than MAX_TWINS copies: boilerplate"
    assert twin_lines("x = (\n", 1) == [], "a source that does not parse"


def test_a_one_line_rewrite_at_a_line_with_twins_is_made_at_the_twins_too():
    hole = next(h for h in holes_at("word.py", TWINS, 5) if h.kind == "and")
    sampler = Sampler(hole, TWINS)
    single = sampler.add("self.min == 1:\n")
    assert single is not None and (single.line, single.last) == (5, 5)
    assert single.text == "            if max == 0 and self.min == 1:"
    assert len(sampler.mutants) == 3 and sampler.twins == 1, "the single rewrite first, then the twin one"
    assert sampler.mutants[2].text == "            if max == 0 and self.min != 1:", "then the clause negated"
    both = sampler.mutants[1]
    assert (both.line, both.last, both.tier) == (5, 8, INFILL_TIER)
    lines = both.applied(TWINS).split("\n")
    assert lines[4] == "            if max == 0 and self.min == 1:" and lines[7] == lines[4], "each at its indentation"
    assert lines[16] == "    if max == 0:", "`other`'s copy is not its twin"
    assert "twin line 8" in both.description
    assert sampler.add("self.min == 1:\n") is None and len(sampler.mutants) == 3, "a repeat makes none again"
    line_hole = next(h for h in holes_at("word.py", TWINS, 3) if h.kind == "line")
    wrapped = Sampler(line_hole, TWINS)
    assert wrapped.add("        self.min = min\n        self.max = max\n") is not None
    assert wrapped.twins == 0, "a rewrite of more than one line has no twin candidate"
    assert wrapped.add("        self.min = int(min)\n") is not None and wrapped.twins == 1
    plain = Sampler(next(h for h in holes_at("word.py", TWINS, 13) if h.kind == "line"), TWINS)
    assert plain.add("        return text.strip()\n") is not None and plain.twins == 0


WALK = """class Node:
    def walk(self):
        yield self
        for child in self.children:
            child.walk()
"""


def test_a_slot_that_makes_the_call_of_the_line_beside_it_is_tried_in_that_line_s_place_first():
    slot = next(h for h in holes_at("node.py", WALK, 5) if h.kind == "before")
    sampler = Sampler(slot, WALK)
    assert sampler.add("            yield from child.walk()\n") is not None
    instead, joined = sampler.mutants
    assert (instead.line, instead.last, instead.text) == (5, 5, "            yield from child.walk()")
    assert instead.description == "model infill in place of line 5: yield from child.walk()"
    assert joined.text == "            yield from child.walk()\n            child.walk()", "the slot's own after it"
    header = next(h for h in holes_at("node.py", WALK, 4) if h.kind == "after")  # after `for`: before line 5
    below = Sampler(header, WALK)
    assert below.add("            yield from child.walk()\n") is not None
    assert [(m.line, m.last, m.text) for m in below.mutants][0] == (5, 5, "            yield from child.walk()")
    other = Sampler(slot, WALK)
    assert other.add("            print(child)\n") is not None and len(other.mutants) == 1, "another call: no"
    assign = "def f(x):\n    y = g(x)\n    return y\n"
    beside = next(h for h in holes_at("f.py", assign, 2) if h.kind == "after")
    joined_only = Sampler(beside, assign)
    assert joined_only.add("    print(g(x))\n") is not None and len(joined_only.mutants) == 1, "an assignment: no"
