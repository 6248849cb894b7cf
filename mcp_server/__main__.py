"""`python -m mcp_server [--http PORT] [--root DIR ...]`: serve MCP over stdio, or streamable HTTP on loopback.

At start, what a killed earlier agentls left (sandboxed processes, temp
dirs) is swept in the background. On SIGTERM every running engine call is
cancelled and waited for (its sandbox killed, its shadow copy removed) before
the process exits with 143: the stdio transport reads stdin in a thread that
no cancellation reaches, so the server does not wait for its own loop.
"""

from __future__ import annotations

import argparse
import logging
import os
import signal
import sys
import threading
from pathlib import Path
from types import FrameType

from agent_core.sandbox.factory import sweep_leftovers
from mcp_server.server import build_server
from mcp_server.worker import cancel_all, join_workers

EXIT_WAIT_S = 30.0  # an engine call still cleaning up at exit (its sandbox, its copy) gets this long
log = logging.getLogger("mcp_server")


def _sweep() -> None:
    try:
        for item in sweep_leftovers():
            log.info("removed leftover %s", item)
    except Exception:  # a failed sweep must not stop the server
        log.exception("sweeping leftovers failed")


def _terminated(signum: int, frame: FrameType | None) -> None:
    cancel_all()
    left = join_workers(EXIT_WAIT_S)
    if left:
        print(f"agentls mcp: exiting with engine calls still running: {', '.join(left)}", file=sys.stderr)
    sys.stderr.flush()
    os._exit(128 + signum)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="agentls mcp", description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT", help="serve streamable HTTP on 127.0.0.1:PORT (/mcp)")
    parser.add_argument("--root", action="append", default=[], metavar="DIR",
                        help="a directory projects may be in when the client declares no MCP roots "
                             "(repeatable; default: the working directory)")
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr (default WARNING)")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    roots = [Path(r).expanduser() for r in args.root] or [Path.cwd()]
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        print(f"agentls mcp: not a directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    server = build_server(roots)
    threading.Thread(target=_sweep, name="agentls-sweep", daemon=True).start()
    signal.signal(signal.SIGTERM, _terminated)
    try:
        if args.http is not None:
            server.run("streamable-http", host="127.0.0.1", port=args.http)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        left = join_workers(EXIT_WAIT_S)
        if left:
            print(f"agentls mcp: exiting with engine calls still running: {', '.join(left)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
