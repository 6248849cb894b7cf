"""`python -m mcp_server [--http PORT] [--root DIR ...]`: serve MCP over stdio, or streamable HTTP on loopback."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from mcp_server.server import build_server
from mcp_server.worker import join_workers

EXIT_WAIT_S = 30.0  # an engine call still cleaning up at exit (its sandbox, its copy) gets this long


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
