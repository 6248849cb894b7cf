"""The containment suite: every hostile payload against every backend on this machine, host checked afterwards.

docker and bubblewrap must contain every payload. The plain-process backend
claims only what rlimits, a uid switch and a process-group kill can give: the
payloads it cannot contain are listed in PROCESS_NOT_ISOLATED and asserted to
*get through* (documented non-isolation, measured, not skipped); the ones
that would send traffic off this machine are never run without isolation.
"""

from __future__ import annotations

import pytest

from agent_core.sandbox.process import NOT_ISOLATED_WARNING
from testkit.containment_payloads import PAYLOADS, agentls_containers, run_payload

# What a plain process cannot stop (it shares the host's network and filesystem).
PROCESS_NOT_ISOLATED = {
    "connect-loopback": "shares the host's network namespace",
    "write-parent": "can write wherever its uid may (the arena is world-writable)",
    "write-symlink": "follows symlinks to anywhere its uid may write",
}
# Never tried without isolation: it would send packets off this machine.
PROCESS_NEVER_RUN = {"connect-public", "dns-lookup"}


@pytest.mark.parametrize("payload", PAYLOADS, ids=[p.name for p in PAYLOADS])
async def test_payload_is_contained(sandbox, arena, payload):
    if sandbox.name == "process" and payload.name in PROCESS_NEVER_RUN | set(PROCESS_NOT_ISOLATED):
        await _documented_non_isolation(sandbox, arena, payload)
        return
    outcome = await run_payload(sandbox, arena, payload, agentls_containers)
    assert outcome.contained, (
        f"{payload.name} escaped the {sandbox.name} sandbox: {outcome.evidence}\n{outcome.report.output[-1500:]}"
    )


async def _documented_non_isolation(sandbox, arena, payload) -> None:
    """The process backend says it is not isolated; where safe, show the payload really gets through."""
    assert sandbox.isolated is False
    assert "network" in NOT_ISOLATED_WARNING and "outside the workspace" in NOT_ISOLATED_WARNING
    if payload.name in PROCESS_NEVER_RUN:
        return
    outcome = await run_payload(sandbox, arena, payload, agentls_containers)
    assert outcome.report.passed == 1, f"expected {payload.name} to get through: {outcome.report.output[-800:]}"
    assert not outcome.contained
    assert all("survived" not in e and "left" not in e for e in outcome.evidence), outcome.evidence


def test_every_payload_is_accounted_for_on_process():
    """No payload silently disappears from the process backend's column."""
    names = {p.name for p in PAYLOADS}
    assert PROCESS_NEVER_RUN <= names and set(PROCESS_NOT_ISOLATED) <= names
    assert len(names) == 17
