"""`agentls mcp [--http PORT [--no-auth]] [--root DIR ...]`: start the MCP server (stdio by default).

Like `agentls serve`, this replaces the current process with
`python -m mcp_server`: the engine package never imports a protocol layer.
"""

from __future__ import annotations

import argparse
import sys

from agent_core.cli.serve import replace_process


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("mcp", help="run the MCP server (stdio by default) for other agents")
    parser.add_argument("--http", type=int, metavar="PORT",
                        help="serve streamable HTTP on 127.0.0.1:PORT (/mcp) to clients that send the bearer token "
                             "it prints at start (and keeps in a 0600 file)")
    parser.add_argument("--no-auth", dest="no_auth", action="store_true",
                        help="with --http: no token (any local user can then run tests and apply patches as you)")
    parser.add_argument("--root", action="append", default=[], metavar="DIR",
                        help="where projects may be (repeatable): a client's MCP roots may narrow it, never widen "
                             "it; default: the working directory, for clients that declare no roots")
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr (default WARNING)")
    parser.set_defaults(func=run)


def server_argv(args: argparse.Namespace) -> list[str]:
    argv = [sys.executable, "-m", "mcp_server", "--log-level", args.log_level]
    if args.http is not None:
        argv += ["--http", str(args.http)]
    if getattr(args, "no_auth", False):
        argv.append("--no-auth")
    for root in args.root:
        argv += ["--root", root]
    return argv


def run(args: argparse.Namespace) -> int:
    return replace_process(server_argv(args))
