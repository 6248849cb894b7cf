"""`agentls serve [--stdio | --tcp HOST:PORT]`: start the language server.

The server package is imported inside `func` only, so the engine and the rest
of the CLI never load pygls or lsprotocol.
"""

from __future__ import annotations

import argparse
import importlib


def register(subparsers) -> None:
    parser = subparsers.add_parser("serve", help="run the language server (stdio by default)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    mode.add_argument("--tcp", metavar="HOST:PORT", help="serve over TCP, e.g. 127.0.0.1:2087")
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr (default WARNING)")
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    # The one place the CLI reaches the LSP layer, by name and only when serving:
    # agent_core itself stays free of pygls / lsprotocol imports.
    server = importlib.import_module("lsp_server.server")
    return server.serve(args)
