"""End to end: trace, configuration changes, failing runs, shutdown with runs in flight."""

from __future__ import annotations

import json

from lsp_support import script_fix
from lsprotocol import types as lsp
from pygls.exceptions import JsonRpcException

from scripted_llm import Fault


def _run_start_settings(s, run_id: str) -> dict:
    journal = s.root / ".agentls" / "runs" / run_id / "journal.jsonl"
    first = json.loads(journal.read_text().splitlines()[0])
    assert first["type"] == "run_start"
    return first["settings"]


def _done(s, run_id: str) -> bool:
    return any(run_id in m for m in s.messages())


async def test_show_trace_returns_the_runs_journal_as_markdown(lsp_session):
    async with lsp_session() as s:
        run_id = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: _done(s, run_id))
        latest = await s.command("agentls.showTrace", {})
        named = await s.command("agentls.showTrace", {"runId": run_id})
        assert latest["runId"] == named["runId"] == run_id
        assert run_id in named["markdown"] and named["markdown"].lstrip().startswith("#")
        try:
            await s.command("agentls.showTrace", {"runId": "no-such-run"})
        except JsonRpcException as exc:
            assert "no-such-run" in str(exc)
        else:
            raise AssertionError("an unknown run id must be an error")


async def test_changed_configuration_takes_effect_for_the_next_run(lsp_session):
    async with lsp_session(configuration={"testCommand": "pytest"}) as s:
        first = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: _done(s, first))
        s.client.set_configuration({"testCommand": "pytest -q tests"}, section="agentls")
        s.client.workspace_did_change_configuration(lsp.DidChangeConfigurationParams(settings=None))
        second = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: _done(s, second))
        assert _run_start_settings(s, first)["test_command"] == "pytest"
        assert _run_start_settings(s, second)["test_command"] == "pytest -q tests"


async def test_a_failing_run_is_reported_and_the_server_keeps_answering(lsp_session, scripted_llm):
    scripted_llm.default("planner", Fault.status(500, times=100))
    scripted_llm.default("coder", Fault.status(500, times=100))
    async with lsp_session({"maxRetries": 0}) as s:
        uri = s.open("calc.py")
        run_id = (await s.command("agentls.planAndFix", {"uri": uri}))["runId"]
        await s.until(lambda: _done(s, run_id), timeout=90)
        report = next(m for m in s.client.messages if run_id in m.message)
        assert report.type in (lsp.MessageType.Warning, lsp.MessageType.Error) and "error" in report.message
        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)),
            context=lsp.CodeActionContext(diagnostics=[]),
        )
        titles = [a.title for a in await s.client.text_document_code_action_async(params)]
        assert len(titles) == 3 and "Plan and fix with a hint..." in titles
        assert s.state.applied_edits == []


async def test_shutdown_with_a_run_in_flight_leaves_no_process_or_temp_dir(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(60))
    async with lsp_session() as s:
        uri = s.open("calc.py")
        await s.command("agentls.planAndFix", {"uri": uri})
        await s.until(lambda: scripted_llm.requests_for("coder"), timeout=60)
        assert any(s.tmpdir.iterdir())  # the run's shadow copy exists while it works
    assert s.leftover_processes == [] and s.leftover_files == []
    assert s.state.applied_edits == []


async def test_bad_command_arguments_are_clear_errors_answered_to_the_request(lsp_session):
    async with lsp_session() as s:
        cases = [
            ("agentls.planAndFix", {}, "missing argument: uri"),
            ("agentls.runTask", {"uri": s.uri("calc.py")}, "missing argument: goal"),
            ("agentls.generateTests", {"uri": "file:///elsewhere/x.py"}, "outside the workspace"),
            ("agentls.runTests", "not an object", "expected one JSON object"),
        ]
        for command, argument, expected in cases:
            try:
                await s.command(command, argument)
            except JsonRpcException as exc:
                assert expected in str(exc), (command, str(exc))
            else:
                raise AssertionError(f"{command} accepted {argument!r}")
        assert not any("internal error" in m for m in s.messages())
