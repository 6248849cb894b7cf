"""The pipeline graph: wiring only (one module per node in nodes/, named as the node; routers in routers.py).

    START -> baseline -> search -> plan -> code -> gate -> test -> finalize -> END
                                  ^                 |
                                  +-- reflect <-----+   tests fail, budget left
                         replan <---- reflect           same signature twice
                                  escalate <--- test            rounds spent, a fallback model set
                                  (escalate -> reflect: the fallback model's rounds)
    (search -> finalize when a single-edit mutant passes every test; tasks go baseline -> plan;
     a goal with no failing test goes baseline -> specify -> plan: the tester's tests of the goal first;
     with the verifier on, test -> verify -> finalize, or verify -> code for one more round with its feedback)
"""

from __future__ import annotations

import functools
import time
from collections.abc import Awaitable, Callable
from typing import Any

from langgraph.graph import END, START, StateGraph

from agent_core.pipeline import routers
from agent_core.pipeline.checkpoint import shadow_files
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.nodes import (
    baseline,
    code,
    escalate,
    finalize,
    gate,
    plan,
    reflect,
    replan,
    search,
    specify,
    test,
    verify,
)
from agent_core.pipeline.state import RunState
from agent_core.pipeline.timebudget import within_budget
from agent_core.pipeline.toolcheck import checked_tools

Node = Callable[[RunState, RunDeps], Awaitable[RunState]]  # returns the state keys it changes


def _bound(name: str, node: Node, deps: RunDeps) -> Any:
    """`node(state, deps)` as a one-argument LangGraph node that journals enter/exit, within the run's time budget
    (a node the budget ends returns status budget_spent: the routers go to finalize).

    (Typed `Any`: mypy cannot solve `StateGraph.add_node`'s node protocols for a TypedDict state.)"""

    async def run(state: RunState) -> RunState:
        deps.journal.write("node_enter", node=name)
        started = time.monotonic()
        try:
            out = (await within_budget(name, node, state, deps)).copy()
            out["shadow_files"] = shadow_files(deps.shadow)  # checkpointed: a resume rebuilds the shadow
            return out
        finally:
            deps.journal.write("node_exit", node=name, duration_s=round(time.monotonic() - started, 4))

    return run


def build_graph(deps: RunDeps, checkpointer: Any = None) -> Any:
    """Compile the pipeline for one run's dependencies."""
    s = deps.settings
    g = StateGraph(RunState)
    for name, node in [("baseline", baseline.baseline), ("plan", plan.plan), ("code", code.code),
                       ("gate", gate.gate), ("test", test.test), ("reflect", reflect.reflect),
                       ("replan", replan.replan), ("finalize", finalize.finalize), ("escalate", escalate.escalate),
                       ("search", search.search), ("specify", specify.specify), ("verify", verify.verify)]:
        g.add_node(name, _bound(name, node, deps))
    g.add_edge(START, "baseline")
    g.add_conditional_edges("baseline", functools.partial(routers.after_baseline, goal_tests=s.verify.goal_tests,
                                                          tool_checked=bool(checked_tools(deps))),
                            ["search", "specify", "plan", "finalize"])
    g.add_conditional_edges("specify", routers.after_specify, ["plan", "finalize"])
    g.add_conditional_edges("search", routers.after_search, ["plan", "finalize"])
    g.add_conditional_edges("plan", routers.after_plan, ["code", "finalize"])
    g.add_conditional_edges("replan", routers.after_plan, ["code", "finalize"])
    g.add_conditional_edges("code", routers.after_code, ["gate", "finalize"])
    g.add_conditional_edges("gate", routers.after_gate, ["test", "finalize"])
    g.add_conditional_edges("test", functools.partial(routers.after_test, max_iterations=s.max_iterations,
                                                      fallback=s.fallback_profile("coder") is not None,
                                                      verifier=s.verify.verifier),
                            ["reflect", "escalate", "verify", "finalize"])
    g.add_conditional_edges("verify", routers.after_verify, ["code", "finalize"])
    g.add_edge("escalate", "reflect")
    g.add_conditional_edges("reflect", functools.partial(routers.after_reflect, max_revisions=s.max_revisions),
                            ["code", "replan", "finalize"])
    g.add_edge("finalize", END)
    return g.compile(checkpointer=checkpointer)
