"""End to end: the server says which project settings it ignored, and where a bad editor setting is (issues 27, 28)."""

from __future__ import annotations

from pathlib import Path

from lsprotocol import types as lsp


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
