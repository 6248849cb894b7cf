"""Diagnostics from sandboxed test runs: publish, replace, clear.

Every published report replaces all earlier agentls diagnostics: files whose
failures are gone get an empty list, so a passing run clears everything.
Diagnostics of other sources are the client's business and never touched.
"""

from __future__ import annotations

import asyncio
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.models import TestReport
from lsp_server import convert
from lsp_server.documents import DocumentStore

if TYPE_CHECKING:
    from lsp_server.deps import Deps  # the composition root's services; deps.py imports this module


class DiagnosticsPublisher:
    """Turns TestReports into `textDocument/publishDiagnostics`, remembering what it published."""

    def __init__(self, server: LanguageServer, documents: DocumentStore) -> None:
        self._server = server
        self._documents = documents
        self._lock = asyncio.Lock()
        self.published: dict[str, list[lsp.Diagnostic]] = {}

    def encoding(self) -> str:
        return convert.encoding_name(self._server.workspace.position_encoding)

    async def publish(self, report: TestReport, root: Path) -> None:
        """Publish `report` (reading line texts off the event loop) and clear files it no longer names."""
        async with self._lock:
            reader = self._documents.line_reader(root)
            by_uri = await asyncio.to_thread(convert.report_to_diagnostics, report, root, reader, self.encoding())
            for uri in set(self.published) - set(by_uri):
                by_uri[uri] = []
            for uri, diagnostics in by_uri.items():
                self._server.text_document_publish_diagnostics(
                    lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
                )
            self.published = {uri: diags for uri, diags in by_uri.items() if diags}

    def touching(self, uri: str, rng: lsp.Range) -> list[lsp.Diagnostic]:
        """agentls diagnostics of `uri` that touch `rng` (for code actions)."""
        return [d for d in self.published.get(uri, []) if convert.ranges_touch(d.range, rng)]


def register(server: LanguageServer, deps: Deps) -> None:
    """Publishing is driven by runs (see runs.py); no request handler is needed here."""
