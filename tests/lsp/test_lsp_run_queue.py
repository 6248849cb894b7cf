"""The run queue and the checkpointer under many runs: every planAndFix ends with a status, none locked out.

Each run is a real engine run in the real server over stdio (scripted model,
real sandbox, the workspace's SQLite checkpoints). Ten full fix runs go
through the default queue (two at a time, the rest told they are queued);
a hundred cheap runs (a test command that passes at once: baseline,
checkpoints, end) go ten at a time, the concurrency at which the checkpointer used to fail with
`database is locked`.
"""

from __future__ import annotations

import asyncio
import re

from lsp_support import script_fix


def _modules(root, n: int) -> list[str]:
    for i in range(n):
        (root / f"mod_{i}.py").write_text(f"VALUE_{i} = {i}\n")
    return [f"mod_{i}.py" for i in range(n)]


def _ended(s, run_ids: list[str]) -> dict[str, str]:
    """run id -> the message of its progress end, for the runs that ended."""
    out = {}
    for run_id in run_ids:
        ends = [v for v in s.client.progress_reports.get(f"agentls/{run_id}", []) if v.kind == "end"]
        if ends:
            out[run_id] = ends[-1].message or ""
    return out


async def _start_all(s, files: list[str]) -> list[str]:
    answers = await asyncio.gather(*(s.command("agentls.planAndFix", {"uri": s.uri(f)}) for f in files))
    assert all(a.get("runId") for a in answers), answers
    return [a["runId"] for a in answers]


async def test_ten_fix_runs_queue_two_at_a_time_and_all_end_fixed(lsp_session, scripted_llm):
    script_fix(scripted_llm)
    scripted_llm.default("explainer", "add used c; it adds b now.")
    async with lsp_session({"search": {"enabled": False}}) as s:
        run_ids = await _start_all(s, _modules(s.root, 10))
        await s.until(lambda: len(_ended(s, run_ids)) == 10, timeout=600)
        ended = _ended(s, run_ids)
        texts = " ".join(s.messages()) + " ".join(ended.values())
        assert "database is locked" not in texts
        assert all(re.match(r"fixed\b", m) for m in ended.values()), ended
        queued = [r for r in run_ids if any("queued:" in (v.message or "")
                                            for v in s.client.progress_reports[f"agentls/{r}"])]
        assert len(queued) >= 8, "two start, the others wait their turn"
        assert len(s.state.applied_edits) == 10


async def test_a_hundred_runs_all_end_with_a_status_and_none_locked(lsp_session, scripted_llm):
    # A test command other than pytest is judged by its exit code: `true` passes at once, so each run is the
    # baseline, its checkpoints and its end, without a pytest start-up per run.
    async with lsp_session({"maxConcurrentRuns": 10, "testCommand": "true", "search": {"enabled": False}}) as s:
        run_ids = await _start_all(s, _modules(s.root, 100))
        await s.until(lambda: len(_ended(s, run_ids)) == 100, timeout=600)
        ended = _ended(s, run_ids)
        assert not [m for m in ended.values() if "locked" in m]
        assert all(m.startswith("passed: 1 passed") for m in ended.values()), set(ended.values())
        queued = [r for r in run_ids if any("queued:" in (v.message or "")
                                            for v in s.client.progress_reports[f"agentls/{r}"])]
        assert len(queued) >= 90, "ten start, the others wait their turn"
