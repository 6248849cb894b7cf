"""Configuration end to end: settings from initializationOptions and workspace/configuration, a changed
configuration taking effect for the next run, and what the server says of project settings it ignored and of a
misspelt editor setting (issues 27, 28).
"""

from __future__ import annotations

import json
from pathlib import Path

from lsprotocol import types as lsp


async def test_invalid_initialization_options_are_reported_and_the_server_keeps_going(lsp_session):
    async with lsp_session({"maxIterations": 0, "sandbox": {"backend": "teleport"}}) as s:
        await s.until(lambda: any("invalid settings" in m for m in s.messages()), timeout=30)
        (message,) = [m for m in s.client.messages if "invalid settings" in m.message]
        assert message.type == lsp.MessageType.Error
        assert "agentls.maxIterations" in message.message and "agentls.sandbox.backend" in message.message
        assert "default settings" in message.message
        uri = s.open("calc.py")
        params = lsp.CodeActionParams(
            text_document=lsp.TextDocumentIdentifier(uri=uri),
            range=lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(0, 0)),
            context=lsp.CodeActionContext(diagnostics=[]),
        )
        titles = [a.title for a in await s.client.text_document_code_action_async(params)]
        assert len(titles) == 3 and "Plan and fix with a hint..." in titles


async def test_invalid_workspace_configuration_is_reported(lsp_session):
    async with lsp_session(configuration={"temperature": "hot"}) as s:
        await s.until(lambda: any("temperature" in m for m in s.messages()), timeout=30)


def _run_start_settings(s, run_id: str) -> dict:
    journal = s.root / ".agentls" / "runs" / run_id / "journal.jsonl"
    first = json.loads(journal.read_text().splitlines()[0])
    assert first["type"] == "run_start"
    return first["settings"]


def _done(s, run_id: str) -> bool:
    return any(run_id in m for m in s.messages())


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


async def test_ignored_project_keys_and_a_misspelt_editor_key_are_reported(lsp_session, tmp_path: Path, monkeypatch):
    monkeypatch.setenv("AGENTLS_CONFIG", str(tmp_path / "home" / "config.toml"))
    ws = tmp_path / "ws"  # the session's workspace; its own .agentls.toml is the repository's
    ws.mkdir()
    (ws / ".agentls.toml").write_text('base_url = "http://me:pw0rd-123@repo.invalid/v1"\nrun_tests_on_save = true\n')
    async with lsp_session({"maxIteration": 2}) as s:
        await s.until(lambda: sum("ignored: a project file may not set it" in m for m in s.messages()) == 2, timeout=30)
        await s.until(lambda: any("did you mean" in m for m in s.messages()), timeout=30)
        by_text = {m.message: m.type for m in s.client.messages}
        ignored = {text: kind for text, kind in by_text.items() if "ignored" in text}
        assert all(kind == lsp.MessageType.Warning for kind in ignored.values())
        assert any(f"{ws / '.agentls.toml'}: base_url = " in text for text in ignored)
        assert any(f"{ws / '.agentls.toml'}: run_tests_on_save = true" in text for text in ignored)
        assert not any("pw0rd-123" in text for text in by_text), "the URL's credentials are never shown"
        (error,) = [text for text in by_text if "did you mean" in text]
        assert "editor settings: agentls.maxIteration: unknown setting; did you mean agentls.maxIterations?" in error
        assert by_text[error] == lsp.MessageType.Error
