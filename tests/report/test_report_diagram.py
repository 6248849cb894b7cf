"""The run path diagram's layout: which nodes are drawn, which arrows, with what counts."""

from __future__ import annotations

import pytest

from agent_core.report.diagram import LOOP_ROW, MAIN_ROW, build_diagram


@pytest.mark.parametrize(("steps", "hops", "visited"), [
    ([], {}, set()),
    ([("baseline", 1.0), ("search", 2.0), ("finalize", 0.1)],
     {("START", "baseline"): 1, ("baseline", "search"): 1, ("search", "finalize"): 1, ("finalize", "END"): 1},
     {"baseline", "search", "finalize"}),
    ([("baseline", 1), ("plan", 0), ("code", 1), ("gate", 0), ("test", 2), ("reflect", 0), ("code", 1), ("gate", 0),
      ("test", 2), ("finalize", 0)],
     {("START", "baseline"): 1, ("baseline", "plan"): 1, ("plan", "code"): 1, ("code", "gate"): 2,
      ("gate", "test"): 2, ("test", "reflect"): 1, ("reflect", "code"): 1, ("test", "finalize"): 1,
      ("finalize", "END"): 1},
     {"baseline", "plan", "code", "gate", "test", "reflect", "finalize"}),
    ([("baseline", 0), ("custom", 0), ("custom", 0)],
     {("START", "baseline"): 1, ("baseline", "custom"): 1, ("custom", "custom"): 1, ("custom", "END"): 1},
     {"baseline", "custom"}),
])
def test_edges_and_visits(steps, hops, visited):
    d = build_diagram(steps)
    assert {(e.source, e.target): e.count for e in d.edges} == hops
    assert {n.name for n in d.nodes if n.visits} == visited
    names = {n.name for n in d.nodes}
    assert {*MAIN_ROW, *LOOP_ROW, "START", "END"} <= names, "the whole graph is drawn, unvisited nodes too"
    assert d.path == [name for name, _ in steps]


def test_everything_fits_and_nothing_overlaps():
    d = build_diagram([("baseline", 1), ("plan", 0), ("custom", 0)])
    boxes = [(n.x, n.y) for n in d.nodes]
    assert len(set(boxes)) == len(boxes)
    assert all(0 <= n.x and n.x + 96 <= d.width and 0 <= n.y and n.y + 40 <= d.height for n in d.nodes)


def test_seconds_add_up_per_node():
    d = build_diagram([("test", 1.5), ("reflect", 0.1), ("test", 2.0)])
    assert {n.name: n.seconds for n in d.nodes if n.visits} == {"test": 3.5, "reflect": 0.1}
