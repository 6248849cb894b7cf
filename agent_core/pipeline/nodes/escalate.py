"""The escalate node: the first model's rounds are spent, the fallback model codes from here on."""

from __future__ import annotations

from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.state import RunState


async def escalate(state: RunState, deps: RunDeps) -> RunState:
    """The first model's rounds are spent: the fallback model gets as many more.

    The failure history starts again from the last one, so the first model's repeated failure does not send
    the fallback's first round to a replan.
    """
    profile = deps.settings.fallback_profile("coder")
    deps.journal.write("escalate", model=profile.model if profile else None, after_rounds=state.get("iteration", 0))
    deps.notice(f"escalating to the fallback model {profile.model if profile else '?'}")
    return RunState(escalated=True, signatures=(state.get("signatures") or [])[-1:])
