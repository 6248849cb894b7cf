"""`agentls serve --tcp HOST:PORT` serves LSP over TCP; a bad address is exit code 2."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from lsp_support import REPO

AGENTLS = [sys.executable, "-c", "import sys; from agent_core.cli import main; sys.exit(main())"]


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _send(sock: socket.socket, message: dict) -> None:
    body = json.dumps(message).encode()
    sock.sendall(f"Content-Length: {len(body)}\r\n\r\n".encode() + body)


def _receive(sock: socket.socket) -> dict:
    data = b""
    while b"\r\n\r\n" not in data:
        data += sock.recv(4096)
    header, _, rest = data.partition(b"\r\n\r\n")
    length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
    while len(rest) < length:
        rest += sock.recv(4096)
    return json.loads(rest[:length])


def _connect(port: int, proc: subprocess.Popen) -> socket.socket:
    deadline = time.monotonic() + 60
    while True:
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30)
        except OSError:
            if proc.poll() is not None or time.monotonic() > deadline:
                raise
            time.sleep(0.1)


def test_serve_over_tcp_answers_initialize_and_exits_on_exit(tmp_path: Path):
    port = _free_port()
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([*AGENTLS, "serve", "--tcp", f"127.0.0.1:{port}"], env=env, cwd=tmp_path)
    try:
        with _connect(port, proc) as sock:
            _send(sock, {"jsonrpc": "2.0", "id": 1, "method": "initialize",
                         "params": {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}})
            reply = _receive(sock)
            assert "agentls.planAndFix" in reply["result"]["capabilities"]["executeCommandProvider"]["commands"]
            assert reply["result"]["serverInfo"]["name"] == "agentls"
            _send(sock, {"jsonrpc": "2.0", "id": 2, "method": "shutdown"})
            while _receive(sock).get("id") != 2:
                pass
            _send(sock, {"jsonrpc": "2.0", "method": "exit"})
        proc.terminate()  # a TCP server outlives one client; stop it like a supervisor would
        assert proc.wait(timeout=30) is not None
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()


def test_serve_rejects_a_bad_tcp_address():
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.run([*AGENTLS, "serve", "--tcp", "nonsense"], env=env, capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2 and "HOST:PORT" in proc.stderr
