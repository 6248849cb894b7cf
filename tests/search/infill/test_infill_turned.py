"""The model's own conditions turned round: a fill that writes a condition is tried negated too (infill/turned.py)."""

from __future__ import annotations

import pytest

from agent_core.search.infill.holes import holes_at
from agent_core.search.infill.samples import Sampler
from agent_core.search.infill.turned import negated

ITEMS = """def item(value, parent=None):
    if isinstance(value, list):
        if value and all(isinstance(v, dict) for v in value):
            return "tables"
        return "array"
    return value
"""


@pytest.mark.parametrize("condition, turned", [
    ("isinstance(parent, Array)", "not isinstance(parent, Array)"),
    ("not isinstance(parent, Array)", "isinstance(parent, Array)"),
    ("not (a or b)", "(a or b)"),
    ("not (a)", "a"),
    ("a == b", "a != b"),
    ("(a) == b", "(a) != b"),
    ("x is None", "x is not None"),
    ("x is not None", "x is None"),
    ("'AS' not in words", "'AS' in words"),
    ("k in d", "k not in d"),
    ("a and b", "not (a and b)"),
    ("x if y else z", "not (x if y else z)"),
    ("a < b", "not a < b"),
    ("a == b == c", "not a == b == c"),
    ("  len(xs) > 1 ", "not len(xs) > 1"),
])
def test_a_condition_is_negated_as_a_person_would_write_it(condition, turned):
    assert negated(condition) == turned
    assert negated(negated(condition) or "") is not None


def test_what_is_no_expression_is_not_negated():
    assert negated("1 +") is None and negated("x = 1") is None and negated("") is None


def test_a_clause_the_model_adds_is_tried_negated_right_after_it():
    hole = next(h for h in holes_at("items.py", ITEMS, 3) if h.kind == "and")
    sampler = Sampler(hole, ITEMS)
    first = sampler.add("isinstance(parent, list):\n")
    assert first is not None and first.text == \
        "        if value and all(isinstance(v, dict) for v in value) and isinstance(parent, list):"
    assert [m.text for m in sampler.mutants] == [
        first.text, "        if value and all(isinstance(v, dict) for v in value) and not isinstance(parent, list):"]
    turned = sampler.mutants[1]
    assert (turned.line, turned.last, turned.tier) == (first.line, first.last, first.tier)
    assert turned.description.endswith("(the model's condition negated)") and "not isinstance" in turned.description
    assert sampler.turned == 1
    assert sampler.add("not isinstance(parent, list)") is None, "the negation was made already"
    assert sampler.turned == 1 and len(sampler.mutants) == 2
    loose = Sampler(next(h for h in holes_at("items.py", ITEMS, 3) if h.kind == "or"), ITEMS)
    assert loose.add("parent is None or len(value) > 1") is not None
    assert loose.mutants[1].text.endswith(" or not (parent is None or len(value) > 1):"), \
        "an `or` of the model's own negated in brackets: `not` would split it"


def test_a_guard_the_model_puts_in_a_slot_is_tried_negated_with_its_body_kept():
    hole = next(h for h in holes_at("items.py", ITEMS, 4) if h.kind == "before")
    sampler = Sampler(hole, ITEMS)
    guard = sampler.add("if parent is None:\n    return \"array\"\n")
    assert guard is not None
    assert [m.text.split("\n") for m in sampler.mutants] == [
        ["            if parent is None:", "                return \"array\"", "            return \"tables\""],
        ["            if parent is not None:", "                return \"array\"", "            return \"tables\""]]
    assert sampler.turned == 1


def test_a_header_rewritten_is_turned_and_a_fill_with_no_condition_is_not():
    line = Sampler(next(h for h in holes_at("items.py", ITEMS, 2) if h.kind == "line"), ITEMS)
    assert line.add("    if isinstance(value, (list, tuple)):  # lists too\n") is not None
    assert [m.text for m in line.mutants] == ["    if isinstance(value, (list, tuple)):",
                                              "    if not isinstance(value, (list, tuple)):"], "its comment dropped"
    plain = Sampler(next(h for h in holes_at("items.py", ITEMS, 6) if h.kind == "line"), ITEMS)
    assert plain.add("    return value or parent\n") is not None and plain.turned == 0 and len(plain.mutants) == 1
    body = Sampler(next(h for h in holes_at("items.py", ITEMS, 6) if h.kind == "before"), ITEMS)
    assert body.add("if parent: return parent\n") is not None and body.turned == 0, \
        "a guard with its body on the same line is left as it is"
