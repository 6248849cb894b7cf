"""Diagnostics from sandboxed test runs: publish, replace, clear.

Every published report replaces all earlier agentls diagnostics: files whose
failures are gone get an empty list, so a passing run clears everything.
Diagnostics of other sources are the client's business and never touched.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer

from agent_core.models import Survivor, TestReport
from lsp_server import convert
from lsp_server.documents import DocumentStore


class DiagnosticsPublisher:
    """Turns TestReports into `textDocument/publishDiagnostics`, remembering what it published."""

    def __init__(self, server: LanguageServer, documents: DocumentStore) -> None:
        self._server = server
        self._documents = documents
        self._lock = asyncio.Lock()
        self.published: dict[str, list[lsp.Diagnostic]] = {}
        self.survivors: dict[str, list[lsp.Diagnostic]] = {}  # surviving mutants of the last gen-tests run

    def encoding(self) -> str:
        return convert.encoding_name(self._server.workspace.position_encoding)

    async def publish(self, report: TestReport, root: Path) -> None:
        """Publish `report` (reading line texts off the event loop) and clear files it no longer names."""
        async with self._lock:
            reader = self._documents.line_reader(root)
            by_uri = await asyncio.to_thread(convert.report_to_diagnostics, report, root, reader, self.encoding())
            self._send(by_uri)

    async def publish_survivors(self, survivors: list[Survivor], root: Path) -> None:
        """Replace the surviving-mutant diagnostics (Information) with those of `survivors`."""
        async with self._lock:
            reader = self._documents.line_reader(root)
            found = await asyncio.to_thread(convert.survivor_diagnostics, survivors, root, reader, self.encoding())
            failures = {uri: [d for d in diags if d.code != convert.SURVIVOR_CODE]
                        for uri, diags in self.published.items()}
            self.survivors = found
            self._send({uri: diags for uri, diags in failures.items() if diags})

    def _send(self, failures: dict[str, list[lsp.Diagnostic]]) -> None:
        """Publish failures plus surviving mutants per URI; clear URIs that had some and have none now."""
        merged = {uri: [*failures.get(uri, []), *self.survivors.get(uri, [])]
                  for uri in set(failures) | set(self.survivors)}
        for uri in set(self.published) - set(merged):
            merged[uri] = []
        for uri, diagnostics in merged.items():
            self._server.text_document_publish_diagnostics(
                lsp.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics)
            )
        self.published = {uri: diags for uri, diags in merged.items() if diags}

    def touching(self, uri: str, rng: lsp.Range) -> list[lsp.Diagnostic]:
        """agentls diagnostics of `uri` that touch `rng` (for code actions)."""
        return [d for d in self.published.get(uri, []) if convert.ranges_touch(d.range, rng)]

