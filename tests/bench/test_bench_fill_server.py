"""bench/fill_server.py cuts again the holes a run's JSON names by their labels, in the order they were asked."""

from __future__ import annotations

from agent_core.search import holes_at, shown
from bench.fill_server import hole_named

SOURCE = '''import os


def total(items, scale=1):
    out = 0
    for item in items:
        if item.size > 0 and item.kept:
            out += item.size * scale
    return out


def name(path):
    return os.path.basename(path)
'''


def test_every_hole_a_line_cuts_is_found_again_by_its_label_and_its_shown_twin_too():
    holes = [h for line in (5, 7, 8, 9, 13) for h in holes_at("m.py", SOURCE, line)]
    asked = holes + [shown(h) for h in holes if not (h.is_slot or h.inline or h.kind == "shown")]
    assert {h.kind for h in asked} >= {"line", "shown", "after", "before", "and"}
    for hole in asked:
        again = hole_named("m.py", SOURCE, hole.label)
        assert again is not None and again.label == hole.label, hole.label
        assert (again.first, again.last, again.before, again.after) == (hole.first, hole.last, hole.before, hole.after)


def test_a_label_no_line_near_it_cuts_is_not_found():
    assert hole_named("m.py", SOURCE, "line 40 (shown)") is None
    assert hole_named("m.py", SOURCE, "the whole module") is None
