"""End to end: settings from initializationOptions and workspace/configuration."""

from __future__ import annotations

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

