"""A raw JSON-RPC client over the real server's stdio, for what no well-behaved client sends.

It writes bytes exactly as given (broken headers, junk, huge lengths) and
reads the server's framed messages on a thread, so a test can ask whether a
given request was answered and what else (errors, notifications) came back.
"""

from __future__ import annotations

import json
import os
import queue
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]


def frame(payload: dict | bytes, length: int | str | None = None) -> bytes:
    """A message as a client sends it; `length` overrides the Content-Length value."""
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    return f"Content-Length: {len(body) if length is None else length}\r\n\r\n".encode() + body


def request(msg_id: int, method: str, params: Any = None) -> dict:
    return {"jsonrpc": "2.0", "id": msg_id, "method": method, "params": params}


class RawClient:
    """The server as a subprocess; `send` raw bytes, `wait_for` an answer by id."""

    def __init__(self, workspace: Path, *args: str, env: dict[str, str] | None = None) -> None:
        env = {**os.environ, "PYTHONPATH": f"{REPO}", "XDG_CACHE_HOME": str(workspace.parent / "cache"), **(env or {})}
        self.proc = subprocess.Popen([sys.executable, "-m", "lsp_server", *args], cwd=workspace, env=env,
                                     stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
        self.messages: queue.Queue[dict] = queue.Queue()
        self.seen: list[dict] = []
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        out = self.proc.stdout
        while True:
            length = None
            while True:
                line = out.readline()
                if not line:
                    return
                if line.lower().startswith(b"content-length:"):
                    length = int(line.split(b":", 1)[1])
                if not line.strip():
                    break
            self.messages.put(json.loads(out.read(length)))

    def send(self, data: bytes) -> None:
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def wait_for(self, msg_id: Any, timeout: float = 30) -> dict:
        """The next message with `msg_id` (responses; a hang guard, not a measurement)."""
        for message in self.seen:
            if message.get("id") == msg_id and "method" not in message:
                self.seen.remove(message)
                return message
        while True:
            try:
                message = self.messages.get(timeout=timeout)
            except queue.Empty:
                raise AssertionError(f"no answer to id {msg_id!r}; the server said {self.stderr_tail()}") from None
            if message.get("id") == msg_id and "method" not in message:
                return message
            self.seen.append(message)

    def drain(self) -> list[dict]:
        """Everything received and not yet taken."""
        while not self.messages.empty():
            self.seen.append(self.messages.get())
        return self.seen

    def initialize(self, options: dict | None = None) -> None:
        params = {"processId": None, "rootUri": None, "capabilities": {}, "initializationOptions": options}
        self.send(frame(request(0, "initialize", params)))
        assert "result" in self.wait_for(0)
        self.send(frame({"jsonrpc": "2.0", "method": "initialized", "params": {}}))

    def alive(self, msg_id: int) -> None:
        """The server still hears: a request for an unknown method gets its -32601 answer."""
        answer = self.wait_for_sent(request(msg_id, "agentls/ping"), msg_id)
        assert answer["error"]["code"] == -32601, answer

    def wait_for_sent(self, payload: dict, msg_id: Any) -> dict:
        self.send(frame(payload))
        return self.wait_for(msg_id)

    def wait_until(self, ready, what: str, timeout: float = 120) -> None:
        """Poll `ready()` (a hang guard, not a measurement)."""
        deadline = time.monotonic() + timeout
        while not ready():
            if self.proc.poll() is not None or time.monotonic() > deadline:
                raise AssertionError(f"{what} never happened; the server said {self.stderr_tail()}")
            time.sleep(0.1)

    def stderr_tail(self) -> str:
        if self.proc.poll() is None:
            return "(still running)"
        return self.proc.stderr.read().decode(errors="replace")[-2000:]

    def close(self) -> int:
        if self.proc.poll() is None:
            self.send(frame(request(9999, "shutdown")))
            self.wait_for(9999)
            self.send(frame({"jsonrpc": "2.0", "method": "exit"}))
        try:
            return self.proc.wait(timeout=30)
        finally:
            for stream in (self.proc.stdin, self.proc.stdout, self.proc.stderr):
                stream.close()
