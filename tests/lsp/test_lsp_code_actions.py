"""End to end over stdio: code actions offered at once, with the right kinds and commands."""

from __future__ import annotations

from lsprotocol import types as lsp


def _params(uri: str, line: int, diagnostics: list[lsp.Diagnostic] | None = None, only=None) -> lsp.CodeActionParams:
    rng = lsp.Range(start=lsp.Position(line, 4), end=lsp.Position(line, 4))
    return lsp.CodeActionParams(
        text_document=lsp.TextDocumentIdentifier(uri=uri),
        range=rng,
        context=lsp.CodeActionContext(diagnostics=diagnostics or [], only=only),
    )


async def test_plain_range_offers_refactor_rewrite_and_generate_tests(lsp_session):
    async with lsp_session() as s:
        uri = s.open("calc.py")
        actions = await s.client.text_document_code_action_async(_params(uri, 1))
        kinds = {a.title: a.kind for a in actions}
        assert kinds == {
            "Plan and fix": lsp.CodeActionKind.RefactorRewrite,
            "Plan and fix with a hint...": lsp.CodeActionKind.RefactorRewrite,
            "Generate tests": "source.agentls.generateTests",
        }
        fix = next(a for a in actions if a.title == "Plan and fix")
        assert fix.command.command == "agentls.planAndFix"
        assert fix.command.arguments[0]["uri"] == uri
        assert fix.command.arguments[0]["range"]["start"] == {"line": 1, "character": 4}
        gen = next(a for a in actions if a.title == "Generate tests")
        assert gen.command.command == "agentls.generateTests" and gen.edit is None


async def test_range_on_a_diagnostic_makes_plan_and_fix_a_quickfix_with_the_message(lsp_session):
    async with lsp_session() as s:
        uri = s.open("calc.py")
        other = lsp.Diagnostic(
            range=lsp.Range(start=lsp.Position(1, 0), end=lsp.Position(1, 16)),
            message="Operator '-' looks wrong",
            source="pyright",
        )
        actions = await s.client.text_document_code_action_async(_params(uri, 1, [other]))
        fix = next(a for a in actions if a.title == "Plan and fix")
        assert fix.kind == lsp.CodeActionKind.QuickFix
        assert fix.diagnostics[0].message == other.message
        assert fix.command.arguments[0]["diagnostics"] == ["[pyright] line 2: Operator '-' looks wrong"]


async def test_only_filter_and_non_python_files(lsp_session):
    async with lsp_session() as s:
        uri = s.open("calc.py")
        actions = await s.client.text_document_code_action_async(_params(uri, 1, only=[lsp.CodeActionKind.Source]))
        assert [a.title for a in actions] == ["Generate tests"]
        (s.root / "notes.txt").write_text("hello\n")
        text_uri = s.uri("notes.txt")
        item = lsp.TextDocumentItem(uri=text_uri, language_id="plaintext", version=1, text="hello\n")
        s.client.text_document_did_open(lsp.DidOpenTextDocumentParams(text_document=item))
        assert await s.client.text_document_code_action_async(_params(text_uri, 0)) is None


async def test_capabilities_list_the_commands_kinds_and_incremental_sync(lsp_session):
    async with lsp_session() as s:
        caps = s.capabilities
        assert set(caps.execute_command_provider.commands) == {
            "agentls.planAndFix", "agentls.generateTests", "agentls.runTask",
            "agentls.runTests", "agentls.cancel", "agentls.showTrace", "agentls.showReport", "agentls.applyVerifiedFix",
            "agentls.planAndFixWithHint", "agentls.retryWithHint", "agentls.applyRunFix",
        }
        assert set(caps.code_action_provider.code_action_kinds) == {
            "quickfix",
            "refactor.rewrite",
            "source.agentls.generateTests",
        }
        sync = caps.text_document_sync
        assert (sync.change if hasattr(sync, "change") else sync) == lsp.TextDocumentSyncKind.Incremental


async def test_a_cursor_in_the_indentation_takes_the_clients_diagnostic_on_its_line(lsp_session):
    """Neovim sends the line's diagnostics in the context with the cursor at column 0, before the message's range."""
    async with lsp_session() as s:
        uri = s.open("calc.py")
        other = lsp.Diagnostic(
            range=lsp.Range(start=lsp.Position(1, 4), end=lsp.Position(1, 16)),
            message="Operator '-' looks wrong",
            source="pyright",
        )
        cursor = lsp.Range(start=lsp.Position(1, 1), end=lsp.Position(1, 1))
        params = lsp.CodeActionParams(text_document=lsp.TextDocumentIdentifier(uri=uri), range=cursor,
                                      context=lsp.CodeActionContext(diagnostics=[other]))
        actions = await s.client.text_document_code_action_async(params)
        fix = next(a for a in actions if a.title == "Plan and fix")
        assert fix.kind == lsp.CodeActionKind.QuickFix
        assert fix.command.arguments[0]["diagnostics"] == ["[pyright] line 2: Operator '-' looks wrong"]

        params.context.diagnostics[0].range = lsp.Range(start=lsp.Position(3, 4), end=lsp.Position(3, 16))
        elsewhere = await s.client.text_document_code_action_async(params)
        assert next(a for a in elsewhere if a.title == "Plan and fix").kind == lsp.CodeActionKind.RefactorRewrite
