"""`shutdown` with a run in flight leaves no process or temp dir (the other ways the server ends are in
test_lsp_exit.py and test_lsp_sigterm.py).
"""

from __future__ import annotations

from lsp_support import script_fix

from testkit.scripted_llm import Fault


async def test_shutdown_with_a_run_in_flight_leaves_no_process_or_temp_dir(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(60))
    async with lsp_session() as s:
        uri = s.open("calc.py")
        await s.command("agentls.planAndFix", {"uri": uri})
        await s.until(lambda: scripted_llm.requests_for("coder"), timeout=60)
        assert any(s.tmpdir.iterdir())  # the run's shadow copy exists while it works
    assert s.leftover_processes == [] and s.leftover_files == []
    assert s.state.applied_edits == []
