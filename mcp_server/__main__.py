"""`python -m mcp_server [--http PORT [--no-auth]] [--root DIR ...]`: serve MCP over stdio, or streamable HTTP on
loopback with a bearer token (http_auth.py).

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
from collections.abc import Callable
from pathlib import Path
from types import FrameType

import anyio
import uvicorn

from agent_core.sandbox.factory import sweep_leftovers
from mcp_server.http_auth import ASGIApp, BearerAuth, new_token, remove_token, token_file, write_token
from mcp_server.server import build_server
from mcp_server.worker import cancel_all, join_workers

HOST = "127.0.0.1"
EXIT_WAIT_S = 30.0  # an engine call still cleaning up at exit (its sandbox, its copy) gets this long
log = logging.getLogger("mcp_server")
_AT_EXIT: list[Callable[[], None]] = []  # run on SIGTERM too, which ends the process without unwinding


def _sweep() -> None:
    try:
        for item in sweep_leftovers():
            log.info("removed leftover %s", item)
    except Exception:  # a failed sweep must not stop the server
        log.exception("sweeping leftovers failed")


def _say(line: str) -> None:
    print(f"agentls mcp: {line}", file=sys.stderr, flush=True)


def _terminated(signum: int, frame: FrameType | None) -> None:
    for step in _AT_EXIT:
        step()
    cancel_all()
    left = join_workers(EXIT_WAIT_S)
    if left:
        print(f"agentls mcp: exiting with engine calls still running: {', '.join(left)}", file=sys.stderr)
    sys.stderr.flush()
    os._exit(128 + signum)


def parse_args(argv: list[str] | None = None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="agentls mcp", description=__doc__)
    parser.add_argument("--http", type=int, metavar="PORT",
                        help="serve streamable HTTP on 127.0.0.1:PORT (/mcp), to clients sending the token it prints")
    parser.add_argument("--no-auth", dest="no_auth", action="store_true",
                        help="with --http: serve without the token (any local user can then run tests as you)")
    parser.add_argument("--root", action="append", default=[], metavar="DIR",
                        help="where projects may be (repeatable): clients' MCP roots may narrow it, never widen it; "
                             "default: the working directory for clients that declare no roots")
    parser.add_argument("--log-level", default="WARNING", help="logging level on stderr (default WARNING)")
    return parser.parse_args(argv)


def serve_http(app: ASGIApp, port: int, no_auth: bool) -> None:
    """Serve `app` on 127.0.0.1:`port`, behind a fresh token unless `no_auth` (then say so, loudly)."""
    url = f"http://{HOST}:{port}/mcp"
    if no_auth:
        _say(f"WARNING: serving {url} WITHOUT authentication (--no-auth): any local user can run commands in "
             "your projects' sandboxes and apply patches to them as you")
    else:
        token, path = new_token(), token_file(port)
        try:
            write_token(path, token)
        except OSError as exc:
            raise SystemExit(f"agentls mcp: cannot write the token file {path}: {exc}") from exc
        _AT_EXIT.append(lambda: remove_token(path, token))
        _say(f"serving {url}; clients must send the header\n    Authorization: Bearer {token}\n"
             f"  (it is also in {path}, readable by you alone; a new token is made at each start)")
        app = BearerAuth(app, token)
    anyio.run(uvicorn.Server(uvicorn.Config(app, host=HOST, port=port, log_level="warning")).serve)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    logging.basicConfig(stream=sys.stderr, level=args.log_level.upper())
    roots = [Path(r).expanduser() for r in args.root] or [Path.cwd()]
    missing = [str(r) for r in roots if not r.is_dir()]
    if missing:
        print(f"agentls mcp: not a directory: {', '.join(missing)}", file=sys.stderr)
        return 2
    if args.no_auth and args.http is None:
        print("agentls mcp: --no-auth applies to --http only", file=sys.stderr)
        return 2
    bounded = bool(args.root) or args.http is not None  # an HTTP client is not the user who started the server
    server = build_server(roots, bounded)
    threading.Thread(target=_sweep, name="agentls-sweep", daemon=True).start()
    signal.signal(signal.SIGTERM, _terminated)
    try:
        if args.http is not None:
            serve_http(server.streamable_http_app(host=HOST), args.http, args.no_auth)
        else:
            server.run("stdio")
    except KeyboardInterrupt:
        pass
    finally:
        for step in _AT_EXIT:
            step()
        left = join_workers(EXIT_WAIT_S)
        if left:
            print(f"agentls mcp: exiting with engine calls still running: {', '.join(left)}", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
