"""The server over a raw stdio pipe: framing mistakes and unparsable params never leave it deaf, dead or silent."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonrpc_raw import REPO, RawClient, frame, request


def _started(tmp_path: Path, *args: str) -> Iterator[RawClient]:
    (tmp_path / "ws").mkdir()
    raw = RawClient(tmp_path / "ws", *args)
    try:
        raw.initialize()
        yield raw
    finally:
        raw.close()


@pytest.fixture
def client(tmp_path: Path) -> Iterator[RawClient]:
    """The server with its default limits."""
    yield from _started(tmp_path)


@pytest.fixture
def small_client(tmp_path: Path) -> Iterator[RawClient]:
    """The server with a 4 KiB message limit."""
    yield from _started(tmp_path, "--max-message-bytes", "4096")


def _null_id_errors(client: RawClient) -> list[dict]:
    return [m for m in client.drain() if "error" in m and m.get("id") is None]


@pytest.mark.parametrize("header", [
    b"Content-Length: abc\r\n\r\n",  # non-numeric
    b"Content-Length: \r\n\r\n",  # empty
    b"Content-Length: " + b"9" * 5000 + b"\r\n\r\n",  # more digits than int() takes
    b"Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n",  # missing
    b"",  # no header at all: a bare body
])
def test_a_message_without_a_valid_length_is_skipped_and_the_next_one_heard(client: RawClient, header: bytes) -> None:
    client.send(header + b'{"jsonrpc": "2.0", "id": 1, "method": "agentls/ping"}')
    client.alive(2)
    client.alive(3)
    assert all(m.get("id") != 1 for m in client.drain()), "the broken message itself is not acted on"
    if header:
        assert _null_id_errors(client), "a broken header is answered with an error"


@pytest.mark.parametrize("length", [10**12, 10**9])
def test_a_huge_length_is_answered_with_an_error_and_skipped(client: RawClient, length: int) -> None:
    client.send(f"Content-Length: {length}\r\n\r\n".encode())
    client.alive(2)
    errors = _null_id_errors(client)
    assert len(errors) == 1 and f"skipped a message of {length} bytes" in errors[0]["error"]["message"]
    assert client.proc.poll() is None


def test_a_message_over_the_limit_is_skipped_without_being_read_whole(small_client: RawClient) -> None:
    body = b'{"jsonrpc": "2.0", "id": 1, "method": "agentls/ping", "params": {"pad": "' + b"x" * 200_000 + b'"}}'
    small_client.send(frame(body))
    small_client.alive(2)
    assert all(m.get("id") != 1 for m in small_client.drain())
    errors = _null_id_errors(small_client)
    assert len(errors) == 1 and "the limit is 4096 (--max-message-bytes)" in errors[0]["error"]["message"]


def test_an_understated_length_costs_only_that_message(client: RawClient) -> None:
    client.send(frame(request(1, "agentls/ping"), length=10))
    client.alive(2)
    assert [m["error"]["code"] for m in _null_id_errors(client)] == [-32700]


def test_a_body_that_is_not_json_rpc_is_answered(client: RawClient) -> None:
    client.send(frame(b"{not json"))
    client.send(frame(b"[1, 2]"))
    client.send(frame({"id": 7, "method": "agentls/ping"}))  # no "jsonrpc"
    assert client.wait_for(7)["error"]["code"] == -32600
    client.alive(8)
    assert [m["error"]["code"] for m in _null_id_errors(client)] == [-32700, -32600]


@pytest.mark.parametrize(("method", "params"), [
    ("textDocument/codeAction", {"textDocument": 5, "range": 0, "context": {}}),
    ("textDocument/codeAction", None),
    ("workspace/executeCommand", None),
    ("workspace/executeCommand", {"command": 5}),
])
def test_a_request_whose_params_do_not_parse_gets_an_invalid_params_answer(client: RawClient, method, params) -> None:
    answer = client.wait_for_sent(request(11, method, params), 11)
    assert answer["error"]["code"] == -32602, answer
    assert "invalid params" in answer["error"]["message"].lower()
    client.alive(12)
    shown = [m for m in client.drain() if m.get("method") == "window/showMessage"]
    assert shown == [], "a client's protocol bug is not shown to the user"


def test_a_notification_that_does_not_parse_is_dropped_quietly(client: RawClient) -> None:
    client.send(frame({"jsonrpc": "2.0", "method": "textDocument/didOpen", "params": {"textDocument": 5}}))
    client.alive(2)
    assert [m for m in client.drain() if m.get("method") == "window/showMessage"] == []


def test_over_tcp_the_same_loop_resynchronises_and_skips_oversize_messages(tmp_path: Path) -> None:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    proc = subprocess.Popen([sys.executable, "-m", "lsp_server", "--tcp", f"127.0.0.1:{port}",
                             "--max-message-bytes", "4096"], env=env, cwd=tmp_path, stderr=subprocess.DEVNULL)
    try:
        sock = _connect(port, proc)
        with sock, sock.makefile("rb") as replies:
            sock.sendall(frame(request(0, "initialize", {"processId": None, "rootUri": None, "capabilities": {}})))
            sock.sendall(b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0", "id": 1, "method": "agentls/ping"}')
            sock.sendall(frame({"jsonrpc": "2.0", "id": 1, "method": "agentls/ping", "params": {"pad": "x" * 200_000}}))
            sock.sendall(frame(request(2, "agentls/ping")))
            seen = []
            while not seen or seen[-1].get("id") != 2:
                seen.append(_read_framed(replies))
        assert seen[0]["id"] == 0 and "result" in seen[0]
        assert [m["error"]["code"] for m in seen[1:]] == [-32600, -32600, -32601]
        assert "the limit is 4096" in seen[2]["error"]["message"]
    finally:
        proc.kill()
        proc.wait()


def _connect(port: int, proc: subprocess.Popen) -> socket.socket:
    for _ in range(600):  # a hang guard: the server starts in well under a second
        try:
            return socket.create_connection(("127.0.0.1", port), timeout=30)
        except OSError:
            if proc.poll() is not None:
                raise
            time.sleep(0.1)
    raise AssertionError("the TCP server never listened")


def _read_framed(stream) -> dict:
    length = None
    while (line := stream.readline()).strip():
        if line.lower().startswith(b"content-length:"):
            length = int(line.split(b":", 1)[1])
    return json.loads(stream.read(length))
