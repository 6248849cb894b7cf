"""Holes cut around a suspect line: the line, its statement, the slots after and before it, its block."""

from __future__ import annotations

from dataclasses import dataclass, field

from agent_core.search.infill.holes import (
    AFTER_CHARS,
    BEFORE_CHARS,
    MAX_BLOCK_LINES,
    SNAP_LINES,
    _place,
    holes_at,
    shown,
    suspect_holes,
)

SOURCE = '''import re
from os import path


class Box:
    def total(self, items, scale=None):
        """Sum the items."""
        out = 0
        for item in items:
            if item is None:
                continue
            out += item * scale
        return out

    def label(self, name):
        text = "{}: {}".format(
            name, self.total([1, 2],
                             scale=2))
        return text
'''


def _kinds(line: int) -> dict[str, tuple[int, int, int, str]]:
    return {h.kind: (h.first, h.last, h.anchor, h.indent) for h in holes_at("box.py", SOURCE, line)}


def test_a_simple_statement_gets_its_line_slots_and_block():
    holes = holes_at("box.py", SOURCE, 12)
    assert [h.kind for h in holes] == ["line", "shown", "after", "before", "block", "end"]
    line, shown, after, before, block, _ = holes
    assert (shown.first, shown.last, shown.original, shown.indent, shown.after) == \
        (line.first, line.last, line.original, line.indent, line.after), "the line's own hole again"
    assert shown.before == line.before + "            # buggy line: out += item * scale\n", \
        "its old text a comment just above it, at its indentation"
    assert shown.label == "line 12 (shown)"
    assert line.original == "            out += item * scale" and line.indent == " " * 12
    assert line.before.endswith("                continue\n") and line.after == "        return out\n"
    assert line.before.startswith("import re\nfrom os import path\n\n\nclass Box:\n    def total("), \
        "the module's imports and the method's class header come first"
    assert (after.first, after.last, after.anchor, after.original) == (13, 12, 12, "") and after.is_slot
    assert after.before.endswith("out += item * scale\n") and after.after.startswith("        return out")
    assert (before.first, before.last, before.anchor) == (12, 11, 12)
    assert before.after.startswith("            out += item * scale\n")
    assert (block.first, block.last, block.indent) == (9, 12, " " * 8), "the enclosing for loop"
    assert block.original.splitlines()[0] == "        for item in items:"


def test_a_compound_header_gets_its_body_slot_and_no_after_slot_follows_a_leaving_statement():
    kinds = _kinds(10)
    assert kinds["after"] == (11, 10, 10, " " * 16), "the first line of the if's body"
    assert kinds["block"][:2] == (10, 11)
    assert "after" not in _kinds(11), "nothing runs after a continue"
    assert "after" not in _kinds(13)


def test_a_multi_line_statement_is_one_hole_and_its_line_another():
    kinds = _kinds(17)
    assert kinds["line"][:2] == (17, 17)
    assert kinds["statement"][:2] == (16, 18)
    assert kinds["before"] == (16, 15, 16, " " * 8) and kinds["after"] == (19, 18, 18, " " * 8)
    assert "block" not in kinds, "a statement directly in a function body has no block around it"


def test_a_def_line_gets_a_slot_after_its_docstring():
    kinds = _kinds(6)
    assert kinds["after"] == (8, 7, 7, " " * 8)
    assert "before" not in kinds and "block" not in kinds


def test_a_block_longer_than_the_cap_is_not_a_hole():
    body = "".join(f"        x += {i}\n" for i in range(MAX_BLOCK_LINES))
    source = f"def f(xs):\n    x = 0\n    for i in xs:\n{body}    return x\n"
    assert "block" not in {h.kind for h in holes_at("f.py", source, 4)}
    short = f"def f(xs):\n    x = 0\n    for i in xs:\n{body[: body.index(chr(10)) + 1]}    return x\n"
    assert "block" in {h.kind for h in holes_at("f.py", short, 4)}


def test_a_line_deep_inside_a_long_statement_gets_no_statement_hole_and_no_far_slots():
    rows = "".join(f"    ({i}, 'row {i}'),\n" for i in range(20))
    source = f"TABLE = [\n{rows}]\n\n\ndef f():\n    return TABLE\n"
    middle = {h.kind for h in holes_at("t.py", source, 12)}
    assert middle == {"line", "shown", "arg"}, "the table's ends are 11 lines away and more"
    near_top = {h.kind: h for h in holes_at("t.py", source, 3)}
    assert "before" in near_top and "after" not in near_top and "statement" not in near_top
    assert near_top["before"].anchor == 1


def test_the_context_is_bounded_and_nearest_lines_are_kept():
    long_body = "".join(f"    v{i} = {i}\n" for i in range(600))
    source = f"def f():\n{long_body}    return v1\n\n\ndef g():\n" + "".join(f"    w{i} = {i}\n" for i in range(300))
    (line, *_) = holes_at("f.py", source, 602)
    assert len(line.before) <= BEFORE_CHARS and line.before.endswith("    v599 = 599\n")
    assert line.before.startswith("    v"), "cut at a line boundary"
    assert line.after == "", "the context stops at the function's end"
    (inner, *_) = holes_at("f.py", source, 2)
    assert inner.before == "def f():\n" and len(inner.after) <= AFTER_CHARS and inner.after.startswith("    v1 = 1\n")


def test_nearby_holes_of_a_long_function_share_the_start_of_their_prompt():
    imports = "import os\nfrom typing import Any\n\n\n"
    source = imports + "def f():\n" + "".join(f"    v{i} = {i}\n" for i in range(600)) + "    return v1\n"
    starts = set()
    for line in range(400, 400 + SNAP_LINES):
        (hole, *_) = holes_at("f.py", source, line)
        assert hole.before.startswith("import os\nfrom typing import Any\n"), "the imports stay in a long function"
        assert len(hole.before) <= BEFORE_CHARS and hole.before.endswith(f"    v{line - 7} = {line - 7}\n")
        starts.add(hole.before.split("\n")[4])
    assert len(starts) <= 2, f"the shown part starts on a multiple of SNAP_LINES, not a new line per hole: {starts}"


def test_a_hole_of_several_lines_shows_them_as_comments_each_indented_as_it_was():
    statement = next(h for h in holes_at("box.py", SOURCE, 17) if h.kind == "statement")
    made = shown(statement)
    assert (made.kind, made.first, made.last, made.after) == ("shown", 16, 18, statement.after)
    assert made.before == statement.before + (
        "        # buggy lines:\n"
        "        #   text = \"{}: {}\".format(\n"
        "        #       name, self.total([1, 2],\n"
        "        #                        scale=2))\n")


def test_no_hole_where_there_is_no_statement_or_the_file_does_not_parse():
    assert holes_at("box.py", SOURCE, 14) == []  # the blank line between the methods
    assert holes_at("bad.py", "def f(:\n    pass\n", 2) == []


@dataclass
class _Suspect:
    file: str
    lines: list[int] = field(default_factory=list)


def test_suspect_holes_go_best_suspect_first_each_place_once():
    suspects = [_Suspect("box.py", [12, 12, 9]), _Suspect("gone.py", [1]), _Suspect("box.py", [10])]
    holes = suspect_holes(suspects, {"box.py": SOURCE}, lines_per_suspect=2)
    assert [(h.first, h.kind) for h in holes[:5]] == [(12, "line"), (12, "shown"), (13, "after"), (12, "before"),
                                                      (9, "block")]
    assert len(holes) == len({_place(h) for h in holes})
    assert holes[-1].first in (10, 11, 12) and all(h.path == "box.py" for h in holes)
    assert suspect_holes(suspects, {"box.py": SOURCE}, max_suspects=1) == holes[:6]


def test_a_slot_after_a_block_and_the_slot_before_the_next_statement_are_one_hole():
    kinds = _kinds(12)
    assert kinds["end"] == (13, 12, 12, " " * 8), "after the for loop, at its indentation"
    end = next(h for h in holes_at("box.py", SOURCE, 12) if h.kind == "end")
    assert end.label == "slot after the block ending line 12" and end.after == "        return out\n"
    ahead = next(h for h in holes_at("box.py", SOURCE, 13) if h.kind == "before")
    assert (ahead.first, ahead.last, ahead.indent) == (end.first, end.last, end.indent)
    holes = suspect_holes([_Suspect("box.py", [12, 13])], {"box.py": SOURCE})
    assert [h.kind for h in holes if (h.first, h.last, h.indent) == (13, 12, " " * 8)] == ["end"], \
        "cut once, where it was first cut"


def test_spread_holes_ask_the_next_lines_own_hole_before_the_first_line_s_slots_and_block():
    from agent_core.search.infill.holes import spread_holes

    holes = spread_holes([("box.py", 12), ("box.py", 8), ("box.py", 13)], {"box.py": SOURCE})
    labels = [(h.first, h.kind) for h in holes]

    assert labels[:4] == [(12, "shown"), (12, "line"), (8, "shown"), (8, "line")], \
        "each line's own holes first (its old text shown, then hidden), by rank"
    assert labels[4:6] == [(13, "after"), (12, "before")], "then the first line's slots"
    assert labels.index((13, "line")) > labels.index((12, "before")), "the third line after the first's slots"
    assert len(holes) == len({_place(h) for h in holes}), "once each"
    assert {h.kind for h in holes} >= {"line", "after", "before", "block"}


CONDITIONS = '''def pick(a, b, flag):
    if a > b:  # the larger
        return a
    elif flag or b < 0:
        return -b
    while (n := a) > 0:
        a -= 1
    if (a and
            b):
        return 0
    return b
'''


def test_a_one_line_condition_gets_a_clause_added_behind_and_and_behind_or():
    holes = {h.kind: h for h in holes_at("pick.py", CONDITIONS, 2)}
    both = holes["and"], holes["or"]
    assert [(h.first, h.last, h.inline, h.is_slot, h.original) for h in both] == [(2, 2, True, False, "")] * 2
    assert holes["and"].head == "    if a > b and " and holes["and"].tail == ":  # the larger"
    assert holes["or"].head == "    if a > b or "
    assert holes["and"].before.endswith("def pick(a, b, flag):\n    if a > b and "), "the function, then the head"
    assert holes["and"].after.startswith(":  # the larger\n        return a\n"), "the tail, then the next lines"
    assert holes["and"].label == "line 2 (condition and ...)"


def test_a_clause_binds_to_the_whole_condition_and_only_one_line_headers_get_one():
    elif_ = {h.kind: h for h in holes_at("pick.py", CONDITIONS, 4) if h.inline}
    assert elif_["and"].head == "    elif (flag or b < 0) and ", "`and` would bind tighter than the `or`"
    assert elif_["or"].head == "    elif flag or b < 0 or "
    loop = {h.kind: h for h in holes_at("pick.py", CONDITIONS, 6) if h.inline}
    assert loop["and"].head == "    while (n := a) > 0 and " and loop["and"].tail == ":"
    assert not [h for line in (8, 9, 11) for h in holes_at("pick.py", CONDITIONS, line) if h.inline], \
        "not a condition over two lines, its body or a line under no condition"


def test_a_line_under_a_condition_gets_the_condition_s_clauses_and_a_line_under_its_else_not():
    under = [(h.kind, h.first, h.head) for h in holes_at("pick.py", CONDITIONS, 3) if h.inline]
    assert under == [("and", 2, "    if a > b and "), ("or", 2, "    if a > b or ")], "the `if` the return runs under"
    assert [(h.kind, h.first) for h in holes_at("pick.py", CONDITIONS, 7) if h.inline] == [("and", 6), ("or", 6)]
    source = "def f(a):\n    if a:\n        a += 1\n    else:\n        a -= 1\n    return a\n"
    assert not [h for h in holes_at("f.py", source, 5) if h.inline], "the else branch runs when the condition fails"
    from agent_core.search.infill.holes import spread_holes

    holes = spread_holes([("pick.py", 3), ("pick.py", 2)], {"pick.py": CONDITIONS})
    assert [(h.first, h.kind) for h in holes].count((2, "and")) == 1, "cut once, for the line ranked first"


def test_a_line_s_and_clause_comes_just_after_its_own_hole_and_its_or_clause_after_its_slots():
    from agent_core.search.infill.holes import spread_holes

    labels = [(h.first, h.kind) for h in spread_holes([("pick.py", 4), ("pick.py", 2)], {"pick.py": CONDITIONS})]
    assert labels[:8] == [(4, "shown"), (4, "line"), (4, "and"), (2, "shown"), (2, "line"), (5, "after"),
                          (4, "before"), (2, "and")]
    assert labels.index((4, "or")) > labels.index((4, "before")), "an `or` clause after the slots"


CALLS = '''import datetime as dt


def stamp(value, items, now):
    when = dt.datetime.fromtimestamp(value).replace(hour=int(items[0]))  # local
    quotes = ('"', "'",)
    a, b = len(items), 2
    return [now(), sorted(items)]
'''


def test_the_widest_brackets_of_a_line_get_an_argument_added_before_their_closing_bracket():
    def arg(line: int) -> list[tuple[str, str]]:
        return [(h.head.lstrip(), h.tail) for h in holes_at("stamp.py", CALLS, line) if h.kind == "arg"]

    assert arg(5) == [("when = dt.datetime.fromtimestamp(value).replace(hour=int(items[0]), ", ")  # local")], \
        "the call spanning the most of the line, not the calls inside it"
    assert arg(6) == [("quotes = ('\"', \"'\", ", ")")], "a bracketed tuple; after its trailing comma one space"
    assert arg(7) == [("a, b = len(items, ", "), 2")], "a tuple without brackets is not one: the call in it is"
    assert arg(8) == [("return [now(), sorted(items), ", "]")], "a list with items"
    hole = next(h for h in holes_at("stamp.py", CALLS, 5) if h.kind == "arg")
    assert (hole.first, hole.last, hole.original, hole.inline, hole.is_slot) == (5, 5, "", True, False)
    assert hole.before.endswith("def stamp(value, items, now):\n" + hole.head)
    assert hole.after.startswith(hole.tail + "\n    quotes = ")
    assert hole.label == "line 5 (argument at column 73)"
    empty = "def f(clock):\n    return clock.now()\n"
    assert [h.head for h in holes_at("f.py", empty, 2) if h.kind == "arg"] == ["    return clock.now("], \
        "an empty call's first argument"
    assert not [h for h in holes_at("f.py", "def f(a):\n    return []\n", 2) if h.kind == "arg"], "an empty list"


def test_a_line_s_argument_hole_comes_after_its_and_clause_and_before_its_slots_each_cut_once():
    from agent_core.search.infill.holes import spread_holes

    source = "def f(items, key):\n    if key in items:\n        return sorted(items, reverse=True)\n    return []\n"
    holes = spread_holes([("f.py", 3), ("f.py", 3)], {"f.py": source})
    kinds = [(h.first, h.kind) for h in holes]
    assert kinds[:5] == [(3, "shown"), (3, "line"), (2, "and"), (3, "arg"), (3, "before")], kinds
    assert kinds.count((3, "arg")) == 1
    both = {(h.first, h.kind, h.head) for h in holes if h.inline}
    assert len(both) == len([h for h in holes if h.inline]), "a clause and an argument of one line are two places"
