"""The server's per-message bookkeeping stays bounded: what a long editing session leaves behind is nothing.

The real server (build_server, pygls' protocol with lsp_server/protocol.py)
is fed framed message bodies through the reading loop's `dispatch`, as
stdin would feed them; its writer is an in-memory stream. pygls 2.1.1 kept
the future of every coroutine or generator notification handler (didOpen,
didChange, didClose, didSave) in `_request_futures` forever: found by the
soak (bench/soak.py) as the only Python-level growth.
"""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

from pygls.io_ import StdoutWriter

from lsp_server.framing import dispatch
from lsp_server.server import build_server

ROUNDS = 40


def _body(method: str, params: dict, msg_id: int | None = None) -> bytes:
    message = {"jsonrpc": "2.0", "method": method, "params": params}
    if msg_id is not None:
        message["id"] = msg_id
    return json.dumps(message).encode()


async def _settle(protocol, timeout: float = 30) -> None:
    """Let handler tasks (didSave's is a coroutine) finish; a hang guard, not a measurement."""
    deadline = asyncio.get_running_loop().time() + timeout
    while any(not f.done() for f in protocol._request_futures.values()):
        assert asyncio.get_running_loop().time() < deadline, "handlers never finished"
        await asyncio.sleep(0.01)
    await asyncio.sleep(0.05)


async def test_an_editing_session_leaves_no_handler_futures_behind(tmp_path: Path) -> None:
    (tmp_path / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    server = build_server()
    out = io.BytesIO()
    server.protocol.set_writer(StdoutWriter(out))
    protocol = server.protocol
    dispatch(protocol, _body("initialize", {"processId": None, "rootUri": tmp_path.as_uri(), "capabilities": {}}, 1))
    dispatch(protocol, _body("initialized", {}))
    await _settle(protocol)
    uri = (tmp_path / "calc.py").as_uri()
    for version in range(1, ROUNDS + 1):
        text = f"def add(a, b):\n    return a + b  # {version}\n"
        item = {"uri": uri, "languageId": "python", "version": version, "text": text}
        dispatch(protocol, _body("textDocument/didOpen", {"textDocument": item}))
        change = {"textDocument": {"uri": uri, "version": version + 1}, "contentChanges": [{"text": text + "\n"}]}
        dispatch(protocol, _body("textDocument/didChange", change))
        dispatch(protocol, _body("textDocument/didSave", {"textDocument": {"uri": uri}}))
        dispatch(protocol, _body("textDocument/didClose", {"textDocument": {"uri": uri}}))
    await _settle(protocol)
    assert b'"id": 1' in out.getvalue().replace(b'"id":1', b'"id": 1'), "initialize was answered"
    assert len(protocol._request_futures) == 0, f"{len(protocol._request_futures)} finished handlers kept"
    assert server.workspace.text_documents == {}, "every document was closed"
