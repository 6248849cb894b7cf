"""The path a run took through the pipeline graph, laid out as an inline SVG diagram.

Built from the journal's node records only (`node_enter` order): every node
of the pipeline is drawn (the ones the run never entered greyed out), and
every transition the run took is an arrow labelled with how often it was
taken. The pipeline graph is small and fixed (graph.py), so the layout is a
fixed grid: the straight line START..finalize on one row, the loop nodes
(reflect, replan, escalate) on a row below. Nodes the layout does not know
(a newer graph, an older journal) are appended to the main row. A layout
engine (graphviz) would be one more system binary for ten boxes; the
geometry here is a rectangle clip and a quadratic curve.
"""

from __future__ import annotations

from collections import Counter, defaultdict
from dataclasses import dataclass

MAIN_ROW = ("baseline", "search", "plan", "code", "gate", "test", "finalize")
LOOP_ROW = {"replan": 3, "reflect": 4.5, "escalate": 6}  # node -> column under the main row (START is 0)
START, END = "START", "END"
BOX_W, BOX_H, COL_W, ROW_Y, LOOP_Y, MARGIN = 96, 40, 124, 70, 190, 20


@dataclass
class DiagramNode:
    name: str
    x: float
    y: float
    visits: int
    seconds: float
    terminal: bool = False  # START / END

    @property
    def cx(self) -> float:
        return self.x + BOX_W / 2

    @property
    def cy(self) -> float:
        return self.y + BOX_H / 2


@dataclass
class DiagramEdge:
    source: str
    target: str
    count: int
    path: str  # the SVG path's `d`
    label_x: float
    label_y: float


@dataclass
class Diagram:
    width: float
    height: float
    nodes: list[DiagramNode]
    edges: list[DiagramEdge]
    path: list[str]  # the nodes in the order the run entered them


def build_diagram(steps: list[tuple[str, float]]) -> Diagram:
    """The diagram of a run whose node executions were `steps` ((node, seconds), in order)."""
    path = [name for name, _ in steps]
    visits = Counter(path)
    seconds: defaultdict[str, float] = defaultdict(float)
    for name, took in steps:
        seconds[name] += took
    main = [START, *MAIN_ROW, *sorted(set(path) - set(MAIN_ROW) - set(LOOP_ROW)), END]
    nodes = {name: DiagramNode(name, MARGIN + i * COL_W, ROW_Y, visits[name], seconds[name], name in (START, END))
             for i, name in enumerate(main)}
    for name, column in LOOP_ROW.items():
        nodes[name] = DiagramNode(name, MARGIN + column * COL_W, LOOP_Y, visits[name], seconds[name])
    hops = Counter(zip([START, *path], [*path, END], strict=True)) if path else Counter()
    edges = [_edge(nodes[a], nodes[b], n) for (a, b), n in hops.items()]
    width = MARGIN * 2 + (len(main) - 1) * COL_W + BOX_W
    return Diagram(width, LOOP_Y + BOX_H + MARGIN + 30, list(nodes.values()), edges, path)


def _edge(a: DiagramNode, b: DiagramNode, count: int) -> DiagramEdge:
    if a is b:  # a node entered twice in a row: a small loop over its box
        x, y = a.cx, a.y
        d = f"M {x - 14:.1f} {y:.1f} C {x - 30:.1f} {y - 40:.1f} {x + 30:.1f} {y - 40:.1f} {x + 14:.1f} {y:.1f}"
        return DiagramEdge(a.name, b.name, count, d, x, y - 34)
    same_row = a.y == b.y
    adjacent = same_row and abs(a.x - b.x) <= COL_W + 1
    if adjacent or not same_row:
        (x1, y1), (x2, y2) = _clip(a, b.cx, b.cy), _clip(b, a.cx, a.cy)
        if not same_row:  # up and down between the rows: two parallel lanes, so a round trip stays readable
            shift = 8 if b.y > a.y else -8
            x1, x2 = x1 + shift, x2 + shift
        mx, my = (x1 + x2) / 2, (y1 + y2) / 2
        label = (mx, my - 8) if same_row else (mx + 16, my)  # beside the line, not on it
        return DiagramEdge(a.name, b.name, count, f"M {x1:.1f} {y1:.1f} L {x2:.1f} {y2:.1f}", *label)
    # a skip along one row: an arc above it (below it on the loop row), higher for longer skips
    span = abs(a.x - b.x) / COL_W
    above = a.y == ROW_Y
    y = a.y if above else a.y + BOX_H
    lift = (-1 if above else 1) * (18 + 10 * span)
    x1, x2 = a.cx + (8 if b.x > a.x else -8), b.cx - (8 if b.x > a.x else -8)
    mx = (x1 + x2) / 2
    d = f"M {x1:.1f} {y:.1f} Q {mx:.1f} {y + 2 * lift:.1f} {x2:.1f} {y:.1f}"
    return DiagramEdge(a.name, b.name, count, d, mx, y + lift - (4 if above else -12))


def _clip(box: DiagramNode, tx: float, ty: float) -> tuple[float, float]:
    """Where the line from the box's centre towards (tx, ty) leaves the box."""
    dx, dy = tx - box.cx, ty - box.cy
    if dx == 0 and dy == 0:
        return box.cx, box.cy
    t = min((BOX_W / 2) / abs(dx) if dx else float("inf"), (BOX_H / 2) / abs(dy) if dy else float("inf"))
    return box.cx + dx * t, box.cy + dy * t
