"""The HTTP transport's credential: a random bearer token made at start, kept in a 0600 file, checked on every request.

Any local user can connect to a port on 127.0.0.1, so `agentls mcp --http`
serves nobody who does not hold the token (as Jupyter's server does): it is
made at start (`secrets.token_urlsafe`), written to a file only the user can
read (`<user state dir>/agentls/mcp-http-<port>.token`, mode 0600, in a 0700
folder), printed once on stderr, and compared in constant time with the
`Authorization: Bearer ...` header of every request (the MCP endpoint, its
event stream, anything else the app serves). A request without it, or with
another, is answered 401 before it reaches the MCP app. `--no-auth` turns this
off, with a warning at start.
"""

from __future__ import annotations

import contextlib
import hmac
import json
import os
import secrets
from collections.abc import Awaitable, Callable, MutableMapping
from pathlib import Path
from typing import Any

import platformdirs

Scope = MutableMapping[str, Any]
Message = MutableMapping[str, Any]
Receive = Callable[[], Awaitable[Message]]
Send = Callable[[Message], Awaitable[None]]
ASGIApp = Callable[[Scope, Receive, Send], Awaitable[None]]

TOKEN_BYTES = 32  # of randomness, before base64
_UNAUTHORIZED = json.dumps({"error": "unauthorized: send the header Authorization: Bearer <token>; agentls mcp "
                                     "prints the token at start and keeps it in its token file"}).encode()


def new_token() -> str:
    return secrets.token_urlsafe(TOKEN_BYTES)


def token_file(port: int) -> Path:
    """Where the token of the server on `port` is kept: the user's state dir (XDG_STATE_HOME on Linux)."""
    return platformdirs.user_state_path("agentls") / f"mcp-http-{port}.token"


def write_token(path: Path, token: str) -> None:
    """Write `token` to `path` readable by the user alone (0600 in a 0700 folder, no symbolic link followed)."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    os.chmod(path.parent, 0o700)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o600)
    try:
        os.fchmod(fd, 0o600)  # a file left by an earlier server keeps its own mode otherwise
        os.write(fd, (token + "\n").encode())
    finally:
        os.close(fd)


def remove_token(path: Path, token: str) -> None:
    """Remove the token file at exit, unless another server has written its own there since."""
    with contextlib.suppress(OSError):
        if path.read_text(encoding="utf-8").strip() == token:
            path.unlink()


def bearer(scope: Scope) -> bytes | None:
    """The credential of the request's `Authorization: Bearer` header, or None."""
    for name, value in scope.get("headers", ()):
        if name.lower() == b"authorization":
            scheme, _, credential = bytes(value).strip().partition(b" ")
            return credential.strip() if scheme.lower() == b"bearer" else None
    return None


class BearerAuth:
    """ASGI middleware: every HTTP request must carry the token; others get 401 and never reach `app`."""

    def __init__(self, app: ASGIApp, token: str) -> None:
        self.app = app
        self._token = token.encode()

    def allowed(self, scope: Scope) -> bool:
        given = bearer(scope)
        return given is not None and hmac.compare_digest(given, self._token)

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        if scope["type"] == "lifespan" or self.allowed(scope):
            await self.app(scope, receive, send)
        elif scope["type"] == "http":
            headers = [(b"content-type", b"application/json"), (b"www-authenticate", b'Bearer realm="agentls"'),
                       (b"content-length", str(len(_UNAUTHORIZED)).encode())]
            await send({"type": "http.response.start", "status": 401, "headers": headers})
            await send({"type": "http.response.body", "body": _UNAUTHORIZED})
        else:  # a websocket (the app serves none): closed before it is accepted
            await send({"type": "websocket.close", "code": 1008})
