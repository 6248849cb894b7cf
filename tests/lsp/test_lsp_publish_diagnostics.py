"""`textDocument/publishDiagnostics` end to end over stdio: a test run's failures, at the failing lines, linked."""

from __future__ import annotations

from lsprotocol import types as lsp


async def test_run_tests_publishes_linked_diagnostics_at_the_failing_lines(lsp_session):
    async with lsp_session() as s:
        test_uri, calc_uri = s.uri("tests/test_calc.py"), s.uri("calc.py")
        answer = await s.command("agentls.runTests", {})
        # one publishDiagnostics per file: under load the second can arrive a little after the first
        await s.until(lambda: test_uri in s.client.diagnostics and calc_uri in s.client.diagnostics)
        (test_diag,) = s.client.diagnostics[test_uri]
        (src_diag,) = s.client.diagnostics[calc_uri]
        assert answer["runId"]
        assert test_diag.range.start.line == 4 and src_diag.range.start.line == 1
        assert test_diag.source == src_diag.source == "agentls"
        assert test_diag.code == "tests/test_calc.py::test_add" == src_diag.code
        assert test_diag.severity == lsp.DiagnosticSeverity.Error
        assert test_diag.related_information[0].location.uri == calc_uri
        assert test_diag.related_information[0].location.range.start.line == 1
        assert src_diag.related_information[0].location.uri == test_uri
        assert s.state.applied_edits == []
        assert not s.scripted_requests()
