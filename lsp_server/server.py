"""The composition root: build the server from an explicit list of features.

`build_server()` creates the shared services, each complete when made
(documents, settings, diagnostics, the safety question, the edit applier, the
run manager, the background search), then registers each feature with the
services it uses, as typed parameters: `documents.register(server)`,
`settings.register(server, store)`, ... No feature module imports this one.
`main()` serves the server over stdio or TCP.
"""

from __future__ import annotations

import argparse
import logging
import threading
from collections.abc import Awaitable, Callable
from typing import BinaryIO

from lsprotocol import types as lsp
from pygls.exceptions import FeatureRequestError
from pygls.lsp.server import LanguageServer

from agent_core.engine import Engine
from agent_core.sandbox.factory import sweep_leftovers
from agent_core.settings import Settings
from lsp_server import __version__, code_actions, commands, documents, framing, quickfixes, runs, settings
from lsp_server.diagnostics import DiagnosticsPublisher
from lsp_server.edits import EditApplier
from lsp_server.protocol import AgentProtocol
from lsp_server.safety import Approver


class AgentLanguageServer(LanguageServer):
    """pygls' server, telling the user about errors that happen outside any request.

    Over stdio and TCP it reads with `framing.serve_messages`, which survives a
    client's framing and protocol mistakes (see lsp_server/framing.py).
    """

    max_message_bytes = framing.DEFAULT_MAX_MESSAGE_BYTES
    stop_runs: Callable[[], Awaitable[None]] | None = None  # the run manager's, once built: what SIGTERM does

    def start_io(self, stdin: BinaryIO | None = None, stdout: BinaryIO | None = None) -> int:
        return framing.start_io(self, self.max_message_bytes, self.stop_runs, stdin, stdout)

    def start_tcp(self, host: str, port: int) -> None:
        framing.start_tcp(self, self.max_message_bytes, self.stop_runs, host, port)

    def report_server_error(self, error: Exception, source: type[Exception]) -> None:
        logging.getLogger(__name__).error("server error: %s", error, exc_info=error)
        if source is FeatureRequestError:  # the client already got it as the request's error answer
            return
        try:
            message = f"agentls: internal error: {error}"
            self.window_show_message(lsp.ShowMessageParams(type=lsp.MessageType.Error, message=message))
        except Exception:  # noqa: BLE001 - the connection may be gone; logging is all that is left
            pass


def build_server(engine_factory: Callable[[Settings], Engine] = Engine) -> AgentLanguageServer:
    server = AgentLanguageServer("agentls", __version__, text_document_sync_kind=lsp.TextDocumentSyncKind.Incremental,
                                 protocol_cls=AgentProtocol)
    docs, store = documents.DocumentStore(server), settings.SettingsStore(server)
    publisher, applier = DiagnosticsPublisher(server, docs), EditApplier(server, docs)
    manager = runs.RunManager(server, docs, store, publisher, Approver(server), applier, engine_factory)
    fixes = quickfixes.QuickFixes(server, docs, store, applier, publisher, manager)
    server.stop_runs = manager.stop_all  # what SIGTERM does before the process exits (framing.until_terminated)
    documents.register(server)
    settings.register(server, store)
    runs.register(server, manager)
    code_actions.register(server, docs, publisher, manager, fixes)
    commands.register(server, manager, docs, store, publisher)
    quickfixes.register(server, fixes, docs, store, manager)
    return server


def add_arguments(parser: argparse.ArgumentParser) -> None:
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    mode.add_argument("--tcp", metavar="HOST:PORT", help="serve over TCP, e.g. 127.0.0.1:2087")
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr (default WARNING)")
    parser.add_argument("--max-message-bytes", dest="max_message_bytes", type=int,
                        default=framing.DEFAULT_MAX_MESSAGE_BYTES, metavar="N",
                        help="largest JSON-RPC message accepted; a larger one is answered with an error and skipped")


def serve(args: argparse.Namespace) -> int:
    """Serve until the client exits; 1 for an exit without shutdown, 2 on a bad --tcp address."""
    logging.basicConfig(level=str(args.log_level).upper(), format="%(asctime)s %(name)s %(levelname)s %(message)s")
    server = build_server()
    server.max_message_bytes = max(1, args.max_message_bytes)
    threading.Thread(target=_sweep_leftovers, name="agentls-sweep", daemon=True).start()
    if args.tcp:
        host, _, port = str(args.tcp).rpartition(":")
        if not host or not port.isdigit():
            logging.getLogger(__name__).error("--tcp wants HOST:PORT, got %r", args.tcp)
            return 2
        server.start_tcp(host, int(port))
        return 0
    return server.start_io()


def _sweep_leftovers() -> None:
    """Remove temp dirs and containers a crashed earlier server left behind."""
    log = logging.getLogger(__name__)
    try:
        for item in sweep_leftovers():
            log.info("removed leftover %s", item)
    except Exception:
        log.exception("sweeping leftovers failed")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m lsp_server", description="agentls language server")
    add_arguments(parser)
    return serve(parser.parse_args(argv))
