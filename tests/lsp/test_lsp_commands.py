"""Wrongly typed command arguments are "invalid params" (-32602) with a readable message, never a traceback."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonrpc_raw import RawClient, request
from lsp_support import make_workspace


@pytest.fixture
def client(tmp_path: Path) -> Iterator[RawClient]:
    raw = RawClient(make_workspace(tmp_path / "ws"))
    try:
        raw.initialize()
        yield raw
    finally:
        raw.close()


@pytest.mark.parametrize(("command", "argument", "says"), [
    ("agentls.planAndFix", {"uri": 5}, "uri: Input should be a valid string"),
    ("agentls.planAndFix", {"uri": "file:///x.py", "range": "garbage"}, "range: Input should be a valid dictionary"),
    ("agentls.planAndFix", {"uri": "file:///x.py", "diagnostics": 5}, "diagnostics: Input should be a valid list"),
    ("agentls.planAndFix", {"uri": "file:///x.py", "range": {"start": {"line": -1, "character": 0},
                                                            "end": {"line": 0, "character": 0}}},
     "range.start.line: Input should be greater than or equal to 0"),
    ("agentls.runTask", {"goal": ["a"]}, "goal: Input should be a valid string"),
    ("agentls.cancel", {"runId": {"x": 1}}, "runId: Input should be a valid string"),
    ("agentls.showTrace", "latest", "expected one JSON object argument, got str"),
])
def test_wrongly_typed_arguments_are_invalid_params(client: RawClient, command: str, argument, says: str) -> None:
    answer = client.wait_for_sent(request(5, "workspace/executeCommand",
                                          {"command": command, "arguments": [argument]}), 5)
    error = answer["error"]
    assert error["code"] == -32602, error
    assert error["message"].startswith(f"{command}: ") and says in error["message"], error["message"]
    assert "Traceback" not in json.dumps(error)
    assert [m for m in client.drain() if m.get("method") == "window/showMessage"] == []
