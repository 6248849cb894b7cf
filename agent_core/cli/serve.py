"""`agentls serve [--stdio | --tcp HOST:PORT]`: start the language server.

The engine package never imports the LSP layer, not even lazily: this
command replaces the current process with `python -m lsp_server`, passing
its options through, so the server runs exactly as an editor would start it.
"""

from __future__ import annotations

import argparse
import os
import sys


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("serve", help="run the language server (stdio by default)")
    mode = parser.add_mutually_exclusive_group()
    mode.add_argument("--stdio", action="store_true", help="serve over stdin/stdout (the default)")
    mode.add_argument("--tcp", metavar="HOST:PORT", help="serve over TCP, e.g. 127.0.0.1:2087")
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr (default WARNING)")
    parser.add_argument("--max-message-bytes", dest="max_message_bytes", type=int, metavar="N",
                        help="largest JSON-RPC message accepted (default 64 MiB)")
    parser.set_defaults(func=run)


def server_argv(args: argparse.Namespace) -> list[str]:
    argv = [sys.executable, "-m", "lsp_server", "--log-level", args.log_level]
    if args.tcp:
        argv += ["--tcp", args.tcp]
    if args.max_message_bytes is not None:
        argv += ["--max-message-bytes", str(args.max_message_bytes)]
    return argv


def replace_process(argv: list[str]) -> int:
    """Become the server `argv` starts (the language server here, the MCP server in cli/mcp.py)."""
    sys.stdout.flush()
    sys.stderr.flush()
    os.execv(argv[0], argv)
    return 0  # not reached: execv replaces the process


def run(args: argparse.Namespace) -> int:
    return replace_process(server_argv(args))
