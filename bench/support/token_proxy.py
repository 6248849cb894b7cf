"""A counting proxy in front of an OpenAI-compatible endpoint, for fair token comparisons.

Both tools under comparison talk to the same upstream through this proxy, so
their tokens are counted the same way: from the `usage` object the upstream
returns (plain JSON, or the last server-sent event of a stream). Requests are
forwarded byte for byte; nothing is cached.

    with TokenProxy("http://127.0.0.1:8080") as proxy:
        ...point a client at proxy.base_url ("http://127.0.0.1:PORT/v1")...
        proxy.reset(); ...; proxy.wait_idle(); proxy.totals()  # {"prompt_tokens", "completion_tokens", "llm_calls"}

Each `reset()` starts a new tally; a request is counted in the tally that was
current when it was *sent*, even if its answer comes back later (a llama.cpp
server keeps generating for a client that gave up). `wait_idle()` waits until
no request is in flight, so the next tool starts on an idle server and the
last one's late answers land in its own tally.
"""

from __future__ import annotations

import http.client
import json
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import urlsplit

_HOP_HEADERS = {"connection", "keep-alive", "transfer-encoding", "content-length", "host"}


class TokenProxy:
    def __init__(self, upstream: str, timeout_s: float = 600.0) -> None:
        parts = urlsplit(upstream if "://" in upstream else f"http://{upstream}")
        self._host, self._port = parts.hostname or "127.0.0.1", parts.port or 80
        self._prefix = parts.path.rstrip("/")
        if self._prefix.endswith("/v1"):
            self._prefix = self._prefix[: -len("/v1")]
        self._timeout = timeout_s
        self._lock = threading.Lock()
        self._epoch = 0
        self._tallies: dict[int, dict[str, int]] = {0: _zero()}
        self._in_flight = 0
        self._server = ThreadingHTTPServer(("127.0.0.1", 0), self._handler())
        self._thread = threading.Thread(target=self._server.serve_forever, daemon=True)

    @property
    def base_url(self) -> str:
        return f"http://127.0.0.1:{self._server.server_address[1]}/v1"

    def __enter__(self) -> TokenProxy:
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._server.shutdown()
        self._server.server_close()

    def reset(self) -> None:
        """Start a new tally."""
        with self._lock:
            self._epoch += 1
            self._tallies[self._epoch] = _zero()

    def totals(self) -> dict[str, int]:
        """The current tally."""
        with self._lock:
            return dict(self._tallies[self._epoch])

    def wait_idle(self, timeout_s: float = 1200.0) -> bool:
        """Wait until no request is in flight; False if one still is after `timeout_s`."""
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            with self._lock:
                if self._in_flight == 0:
                    return True
            time.sleep(0.5)
        return False

    def _begin(self) -> int:
        with self._lock:
            self._in_flight += 1
            return self._epoch

    def _end(self, epoch: int, usage: dict | None, counted: bool) -> None:
        with self._lock:
            self._in_flight -= 1
            if not counted:
                return
            tally = self._tallies[epoch]
            tally["llm_calls"] += 1
            if usage:
                tally["prompt_tokens"] += int(usage.get("prompt_tokens") or 0)
                tally["completion_tokens"] += int(usage.get("completion_tokens") or 0)

    def _handler(self) -> type[BaseHTTPRequestHandler]:
        proxy = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args: object) -> None:  # quiet
                return

            def do_GET(self) -> None:
                self._forward(b"")

            def do_POST(self) -> None:
                self._forward(self.rfile.read(int(self.headers.get("Content-Length") or 0)))

            def _forward(self, body: bytes) -> None:
                counted = self.path.endswith("/chat/completions") or self.path.endswith("/completions")
                epoch, data = proxy._begin(), b""
                try:
                    conn = http.client.HTTPConnection(proxy._host, proxy._port, timeout=proxy._timeout)
                    headers = {k: v for k, v in self.headers.items() if k.lower() not in _HOP_HEADERS}
                    conn.request(self.command, proxy._prefix + self.path, body=body or None, headers=headers)
                    upstream = conn.getresponse()
                    data = upstream.read()
                    conn.close()
                finally:
                    proxy._end(epoch, _usage_of(data) if data else None, counted and bool(data))
                try:
                    self.send_response(upstream.status)
                    for key, value in upstream.getheaders():
                        if key.lower() not in _HOP_HEADERS:
                            self.send_header(key, value)
                    self.send_header("Content-Length", str(len(data)))
                    self.end_headers()
                    self.wfile.write(data)
                except (BrokenPipeError, ConnectionResetError):
                    pass  # the client gave up (a tool killed at its timeout); its tokens are counted all the same

        return Handler


def _zero() -> dict[str, int]:
    return {"prompt_tokens": 0, "completion_tokens": 0, "llm_calls": 0}


def _usage_of(data: bytes) -> dict | None:
    """`usage` from a JSON body or from the last SSE event that carries one."""
    text = data.decode("utf-8", "replace")
    try:
        return json.loads(text).get("usage")
    except (json.JSONDecodeError, AttributeError):
        pass
    usage = None
    for line in text.splitlines():
        if line.startswith("data:") and '"usage"' in line:
            try:
                usage = json.loads(line[5:].strip()).get("usage") or usage
            except json.JSONDecodeError:
                continue
    return usage
