"""The run's time budget (settings.time_budget_s): a deadline from the run's start that every node keeps.

The engine fixes the deadline when the run starts (engine.py). The LLM
client refuses a call after it and ends one still waiting at it
(llm/base.py `time_left`), a verdict run does not start after it
(pipeline/testrun.py), and the search gets a share of what is left
(`search_budget`). graph.py runs every node through `within_budget`: a node
the deadline finds working is cancelled (a sandboxed test run through its
normal cancel path, which kills its processes and removes its files), and a
node that would start after it does not start. Either way the shadow goes
back to the best state so far (pipeline/attempts.py) and the run goes to
finalize with status budget_spent: the best attempt is reported and offered
as an unfixed run's is.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable

from agent_core.llm.base import TimeBudgetSpent, time_left
from agent_core.models import TestReport
from agent_core.pipeline.checkpoint import rewind_shadow
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.state import RunState
from agent_core.search import INFILL_ACCOUNT, search_budget_s

# The search runs first, before any model call, and is given at most this share of the time left when it
# starts: half, because the search finds its fixes early or not at all (8-78 s per fix on the classic
# corpus, issue 26) and a model round on a small local model takes tens of seconds; the other half keeps
# at least a planner/coder/test round within the budget after a search that found nothing.
SEARCH_SHARE = 0.5
# The model's fills of the search's holes (search/infill/) go on after the search's own budget, within this
# share of the run's time left then: a fill is one short answer, far likelier to fix a local bug than a
# whole planner/coder round of the same small model.
SEARCH_WITH_MODEL_SHARE = 0.8
# A model round after the fills is the coder writing a whole function: 305-436 tokens in the bundled model's
# answers on two real-history bugs (2026-12-07), where one such call took 60 s (idle, a fresh 2,405-token
# prompt). Within the 20% the fills leave (25-56 s of a 280 s run there), no round with that model finished
# in 13 unfixed bugs (their `iterations` 0).
ROUND_TOKENS = 400
PACE_CALLS = 8  # the fills' answered calls before their pace says how fast the endpoint writes
CONFIRM_RUNS = 1  # whole-suite runs kept for the last fill that passes the failing tests (its confirmation; a
# rival is looked for only within the fills' own time)
CONFIRM_S = 5.0  # and seconds for the sandbox around it
# Nodes that keep the budget themselves: finalize only decides the status (no model call, no test run), and
# the verifier's call is refused or ended by the LLM client, which the verifier takes as "the tests decide".
SELF_BOUNDED = frozenset({"finalize", "verify"})

Node = Callable[[RunState, RunDeps], Awaitable[RunState]]


def search_budget(deps: RunDeps, baseline: TestReport) -> float:
    """Seconds the search may spend, localizing included: search.budget_s and twice the baseline's time
    (`search_budget_s`), within SEARCH_SHARE of the time left.

    TimeBudgetSpent when no time is left."""
    left = time_left(deps.deadline, deps.settings.time_budget_s)
    budget = search_budget_s(deps.settings, baseline)
    return budget if left is None else min(budget, SEARCH_SHARE * left)


def infill_deadline(deps: RunDeps, deadline: float | None) -> float | None:
    """When the model's fills of the search's holes stop: search.infill_budget_s after the search's own
    `deadline`, and under a time budget no later than SEARCH_WITH_MODEL_SHARE of the time left at the search's
    end (the rest keeps the confirmation, and a planner round when time allows)."""
    if deadline is None:
        return None
    until = deadline + deps.settings.search.infill_budget_s
    if deps.deadline is not None:
        until = min(until, deadline + SEARCH_WITH_MODEL_SHARE * max(0.0, deps.deadline - deadline))
    return until


def fills_extension(deps: RunDeps, suite_s: float) -> Callable[[float], float | None]:
    """When the model's fills may stop later than `infill_deadline` said (`at`): under a time budget, if at the
    fills' measured pace (the endpoint's seconds per written token over their calls, LLMClient.pace) a model
    round (ROUND_TOKENS written and a test run of `suite_s`) cannot finish in what `at` leaves, that time is the
    fills' too, up to the time kept for confirming the last fill (CONFIRM_RUNS suite and CONFIRM_S). None
    until PACE_CALLS calls were answered (driver/interleave.py `FillsEnd` asks again); from `at` on, one answered
    call is enough, and with none `at` stands (nothing says a round cannot finish)."""
    def extend(at: float) -> float | None:
        if deps.deadline is None:
            return at
        late = time.monotonic() >= at
        pace = deps.llm.pace(INFILL_ACCOUNT, 1 if late else PACE_CALLS)
        if pace is None:
            return at if late else None
        last = deps.deadline - (CONFIRM_RUNS * suite_s + CONFIRM_S)
        round_s = ROUND_TOKENS * pace + suite_s
        return at if deps.deadline - at >= round_s or last <= at else last

    return extend


def time_is_up(deps: RunDeps) -> bool:
    """Whether the run's time budget is spent (for work that ends quietly there, as finalize's)."""
    return deps.deadline is not None and time.monotonic() >= deps.deadline


def check_time(deps: RunDeps) -> float | None:
    """Seconds left of the run's time budget (None: no budget); TimeBudgetSpent once it is spent."""
    return time_left(deps.deadline, deps.settings.time_budget_s)


async def within_budget(name: str, node: Node, state: RunState, deps: RunDeps) -> RunState:
    """`node(state, deps)`, unless the time budget is spent before it starts or while it works: then the
    shadow is the best state so far and the run ends there (`spent`)."""
    if deps.deadline is None or name in SELF_BOUNDED or (name == "test" and state.get("checked") is not None):
        # (a test node with the code node's verified report of this very shadow starts no run: it may finish)
        return await node(state, deps)
    try:
        left = check_time(deps)
    except TimeBudgetSpent:
        return spent(state, deps, name)  # the node does not start
    timer = asyncio.timeout(left)
    try:
        async with timer:
            return await node(state, deps)
    except TimeoutError:
        if not timer.expired():
            raise
    except TimeBudgetSpent:
        pass
    return spent(state, deps, name)


def spent(state: RunState, deps: RunDeps, node: str) -> RunState:
    """The state keys of a run whose time budget ran out in `node`: the shadow rewound to the best state so far,
    status budget_spent; a state the tests verified before the verifier asked for more stands as the fix."""
    best = state.get("best")
    rewind_shadow(deps.shadow, best["files"] if best else {})  # an untested edit of the node is undone
    budget = deps.settings.time_budget_s
    error = str(TimeBudgetSpent.of(budget))
    deps.journal.write("time_budget_spent", node=node, budget_s=budget, error=error,
                       best_score=best["score"] if best else None)
    if best and best["files"] and best["report"].ok and state.get("verdict"):  # the verifier's extra round
        return RunState(status="fixed" if state.get("kind") == "fix" else "ok", report=best["report"])
    deps.notice(f"{error}: the run ends with its best attempt so far", "warning")
    return RunState(status="budget_spent", error=error)
