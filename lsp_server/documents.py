"""Document sync: the editor's unsaved buffers, as the engine's overlays.

pygls applies `didOpen` / `didChange` (incremental) / `didClose` to its
workspace; this module reads that state for runs: the overlays a run starts
from (open Python and text buffers under the workspace root), the version of
each, and line text for diagnostics (buffer first, disk otherwise).
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from pathlib import Path

from lsprotocol import types as lsp
from pygls.lsp.server import LanguageServer
from pygls.workspace import TextDocument

from lsp_server import convert

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class Snapshot:
    """What a run read: buffer texts and versions of the open documents, by relative path."""

    overlays: dict[str, str]
    versions: dict[str, int | None]


class DocumentStore:
    """Read-only view of the open documents for the rest of the server."""

    def __init__(self, server: LanguageServer) -> None:
        self._server = server

    def _open_documents(self) -> Iterable[TextDocument]:
        documents: dict[str, TextDocument] = self._server.workspace.text_documents  # pygls leaves it untyped
        return documents.values()

    def is_open(self, uri: str) -> bool:
        return any(doc.uri == uri for doc in self._open_documents())

    def open_document(self, uri: str) -> TextDocument | None:
        for doc in self._open_documents():
            if doc.uri == uri:
                return doc
        return None

    def snapshot(self, root: Path) -> Snapshot:
        overlays: dict[str, str] = {}
        versions: dict[str, int | None] = {}
        for doc in self._open_documents():
            rel = convert.relative_path(doc.uri, root)
            if rel is None:
                continue
            overlays[rel] = doc.source
            versions[rel] = doc.version
        return Snapshot(overlays=overlays, versions=versions)

    def current(self, root: Path, relative: str) -> TextDocument | None:
        """The open document for a workspace-relative path, or None."""
        return self.open_document(convert.workspace_uri(root, relative))

    def text(self, root: Path, relative: str) -> str:
        """Buffer text if open, else the file on disk ('' when missing). Call off the event loop for disk."""
        doc = self.current(root, relative)
        if doc is not None:
            return doc.source
        try:
            return (root / relative).read_text(encoding="utf-8")
        except (OSError, UnicodeDecodeError):
            return ""

    def line_reader(self, root: Path) -> Callable[[str, int], str]:
        """A `read_line(relative, index)` for diagnostics, caching each file's lines."""
        cache: dict[str, list[str]] = {}

        def read_line(relative: str, index: int) -> str:
            if relative not in cache:
                cache[relative] = self.text(root, relative).splitlines()
            lines = cache[relative]
            return lines[index] if 0 <= index < len(lines) else ""

        return read_line


def register(server: LanguageServer) -> None:
    """Incremental sync is pygls' own (the kind is set in `build_server`); log opens for tracing."""

    @server.feature(lsp.TEXT_DOCUMENT_DID_OPEN)
    def did_open(ls: LanguageServer, params: lsp.DidOpenTextDocumentParams) -> None:
        log.debug("opened %s v%s", params.text_document.uri, params.text_document.version)
