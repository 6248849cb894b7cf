"""The services the language server's features share, built once by the composition root.

Each feature's `register(server, deps: Deps)` takes what it needs from here;
`lsp_server/server.py` calls `build_deps` and then every feature in order.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from pygls.lsp.server import LanguageServer

from agent_core.engine import Engine
from agent_core.settings import Settings
from lsp_server.diagnostics import DiagnosticsPublisher
from lsp_server.documents import DocumentStore
from lsp_server.edits import EditApplier
from lsp_server.quickfixes import QuickFixes
from lsp_server.runs import RunManager
from lsp_server.safety import Approver
from lsp_server.settings import SettingsStore


@dataclass
class Deps:
    """The services features share."""

    server: LanguageServer
    documents: DocumentStore
    settings: SettingsStore
    diagnostics: DiagnosticsPublisher
    approver: Approver
    edits: EditApplier
    runs: RunManager
    quickfixes: QuickFixes | None = None  # set by build_deps: QuickFixes takes the other services


def build_deps(server: LanguageServer, engine_factory: Callable[[Settings], Engine]) -> Deps:
    docs = DocumentStore(server)
    store = SettingsStore(server)
    publisher = DiagnosticsPublisher(server, docs)
    approver = Approver(server)
    applier = EditApplier(server, docs)
    manager = RunManager(server, docs, store, publisher, approver, applier, engine_factory)
    deps = Deps(server, docs, store, publisher, approver, applier, manager)
    deps.quickfixes = QuickFixes(deps)
    return deps
