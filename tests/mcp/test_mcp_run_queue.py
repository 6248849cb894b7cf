"""MCP calls take the run queue: N concurrent `run_tests` never run more than `max_concurrent_runs` sandboxes at once.

Each call's test marks itself running with a file in its shadow copy (the one
place a sandboxed test may write), holds for a while, and removes the mark;
the test watches the marks from the host and records the most seen at once.
"""

from __future__ import annotations

from pathlib import Path

import anyio
from mcp_support import CALC

HOLD_S = 8.0
SLOW = {
    **CALC,
    "tests/test_slow.py": (
        "import os\nimport time\n\n\ndef test_hold():\n    mark = f'RUNNING-{os.getpid()}'\n"
        f"    open(mark, 'w').close()\n    time.sleep({HOLD_S})\n    os.remove(mark)\n"
    ),
}


def _running(tmpdir: Path) -> set[str]:
    """The running marks in every shadow copy (`<TMPDIR>/agentls-shadow-*/<project>/RUNNING-<pid>`)."""
    return {str(p) for p in tmpdir.glob("agentls-shadow-*/*/RUNNING-*")}


async def test_concurrent_calls_run_at_most_max_concurrent_runs_sandboxes(mcp_session):
    calls, limit = 4, 2
    async with mcp_session(SLOW, extra_env={"AGENTLS_MAX_CONCURRENT_RUNS": str(limit)}) as s:
        seen: set[str] = set()
        most = 0
        results = []

        async def call() -> None:
            results.append(await s.call("run_tests", project=str(s.project), tests=["tests/test_slow.py"]))

        async def watch(done: anyio.Event) -> None:
            nonlocal most
            while not done.is_set():
                now = _running(s.tmpdir)
                seen.update(now)
                most = max(most, len(now))
                await anyio.sleep(0.05)

        done = anyio.Event()
        async with anyio.create_task_group() as watching:
            watching.start_soon(watch, done)
            async with anyio.create_task_group() as group:
                for _ in range(calls):
                    group.start_soon(call)
            done.set()

        assert [r.structured_content["tests"]["passed"] for r in results] == [1] * calls, results
        assert len(seen) == calls, f"every call's test was seen running: {seen}"
        assert most <= limit, f"{most} sandboxes ran at once; max_concurrent_runs is {limit}"
        assert most == limit, "the queue lets max_concurrent_runs work together"
