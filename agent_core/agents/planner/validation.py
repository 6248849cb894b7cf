"""Plan validation and ordering, and the cheap textual pre-plan.

`validate_plan` turns the planner's proposal into a `Plan` whose subtasks are
in topological order (higher priority first among the ready ones), or raises
`PlanError` with a message precise enough to send back to the model:
duplicate ids, priorities outside 1-5, unknown dependencies, and cycles
named step by step ("plan has a dependency cycle: t1 -> t2 -> t1").
"""

from __future__ import annotations

import heapq
import re

from agent_core.agents.planner.schema import PlannerOutput
from agent_core.models import Plan, SubTask, TestReport


class PlanError(ValueError):
    """A plan that cannot be executed as written."""


def validate_plan(proposal: PlannerOutput) -> Plan:
    """Check ids, priorities and dependencies; return the plan in execution order."""
    steps = proposal.subtasks
    if not steps:
        raise PlanError("plan has no steps")
    ids = [s.id.strip() for s in steps]
    dupes = sorted({i for i in ids if ids.count(i) > 1})
    if dupes:
        raise PlanError(f"plan has duplicate step ids: {', '.join(dupes)}")
    if any(not i for i in ids):
        raise PlanError("plan has a step without an id")
    bad = [f"{s.id} ({s.priority})" for s in steps if not 1 <= s.priority <= 5]
    if bad:
        raise PlanError(f"priority must be 1-5, got: {', '.join(bad)}")
    known = set(ids)
    unknown = [f"{s.id} -> {d}" for s in steps for d in s.dependencies if d not in known]
    if unknown:
        raise PlanError(f"plan has unknown dependencies: {', '.join(unknown)}")
    self_deps = [s.id for s in steps if s.id in s.dependencies]
    if self_deps:
        raise PlanError(f"plan has a dependency cycle: {self_deps[0]} -> {self_deps[0]}")
    subtasks = [
        SubTask(id=s.id, description=s.description, priority=s.priority, dependencies=s.dependencies, files=s.files)
        for s in steps
    ]
    return Plan(approach=proposal.approach, subtasks=topological_order(subtasks),
                required_packages=proposal.required_packages)


def topological_order(subtasks: list[SubTask]) -> list[SubTask]:
    """Kahn's algorithm; among ready steps the highest priority goes first, then plan order."""
    by_id = {s.id: s for s in subtasks}
    position = {s.id: n for n, s in enumerate(subtasks)}
    waiting = {s.id: set(s.dependencies) for s in subtasks}
    ready = [(-s.priority, position[s.id], s.id) for s in subtasks if not s.dependencies]
    heapq.heapify(ready)
    order: list[SubTask] = []
    while ready:
        _, _, current = heapq.heappop(ready)
        order.append(by_id[current])
        for other, deps in waiting.items():
            if current in deps:
                deps.discard(current)
                if not deps:
                    heapq.heappush(ready, (-by_id[other].priority, position[other], other))
    if len(order) < len(subtasks):
        raise PlanError(f"plan has a dependency cycle: {' -> '.join(find_cycle(subtasks))}")
    return order


def find_cycle(subtasks: list[SubTask]) -> list[str]:
    """One dependency cycle as a closed path of ids, e.g. ['t1', 't2', 't1']."""
    deps = {s.id: s.dependencies for s in subtasks}
    state: dict[str, int] = {}  # 1 on the stack, 2 done
    stack: list[str] = []

    def visit(node: str) -> list[str] | None:
        state[node] = 1
        stack.append(node)
        for nxt in deps.get(node, []):
            if state.get(nxt) == 1:
                return stack[stack.index(nxt):] + [nxt]
            if nxt not in state and (found := visit(nxt)):
                return found
        stack.pop()
        state[node] = 2
        return None

    for s in subtasks:
        if s.id not in state and (cycle := visit(s.id)):
            return cycle
    return []


_FIX_TESTS = re.compile(
    r"^\s*(please\s+)?(fix|repair|make)\b.*\b(test|tests|failing|failure|failures|pass)\b", re.IGNORECASE
)


def textual_preplan(goal: str | None, report: TestReport | None, pointer: str = "") -> Plan | None:
    """A one-step plan, without an LLM call, for 'fix the failing test(s)' with a failing report.

    `pointer` (pipeline/goal.py: file, symbol, selection, diagnostics the editor
    pointed at) is added to the step, which is all the coder reads of the goal.
    """
    if report is None or report.ok or not report.failures:
        return None
    if goal and not _FIX_TESTS.match(goal):
        return None
    first = report.failures[0]
    files = sorted({f.source_file for f in report.failures if f.source_file})
    target = f" in {', '.join(files)}" if files else ""
    description = (
        f"Make the failing test {first.nodeid} pass by fixing the code under test{target}; do not change the test."
    )
    if pointer:
        description += f"\nWhere the user is looking: {pointer}"
    step = SubTask(id="t1", description=description, priority=5, files=files)
    return Plan(approach="Fix the code the failing tests point at.", subtasks=[step])
