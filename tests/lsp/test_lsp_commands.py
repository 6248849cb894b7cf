"""`workspace/executeCommand`: arguments checked (wrongly typed ones are "invalid params", -32602, with a readable
message, never a traceback), `agentls.showTrace`, `agentls.showReport` (the run's HTML report), one run per file.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

import pytest
from jsonrpc_raw import RawClient, request
from lsp_support import make_workspace, script_fix, server_descendants
from pygls.exceptions import JsonRpcException

from testkit.scripted_llm import Fault


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


def _done(s, run_id: str) -> bool:
    return any(run_id in m for m in s.messages())


async def test_show_trace_returns_the_runs_journal_as_markdown(lsp_session):
    async with lsp_session() as s:
        run_id = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: _done(s, run_id))
        latest = await s.command("agentls.showTrace", {})
        named = await s.command("agentls.showTrace", {"runId": run_id})
        assert latest["runId"] == named["runId"] == run_id
        assert run_id in named["markdown"] and named["markdown"].lstrip().startswith("#")
        try:
            await s.command("agentls.showTrace", {"runId": "no-such-run"})
        except JsonRpcException as exc:
            assert "no-such-run" in str(exc)
        else:
            raise AssertionError("an unknown run id must be an error")


async def test_bad_command_arguments_are_clear_errors_answered_to_the_request(lsp_session):
    async with lsp_session() as s:
        cases = [
            ("agentls.planAndFix", {}, "missing argument: uri"),
            ("agentls.runTask", {"uri": s.uri("calc.py")}, "missing argument: goal"),
            ("agentls.generateTests", {"uri": "file:///elsewhere/x.py"}, "outside the workspace"),
            ("agentls.runTests", "not an object", "expected one JSON object"),
        ]
        for command, argument, expected in cases:
            try:
                await s.command(command, argument)
            except JsonRpcException as exc:
                assert expected in str(exc), (command, str(exc))
            else:
                raise AssertionError(f"{command} accepted {argument!r}")
        assert not any("internal error" in m for m in s.messages())


def _ended(s, run_id: str) -> bool:
    return any(v.kind == "end" for v in s.client.progress_reports.get(f"agentls/{run_id}", []))


async def _no_leftovers(s) -> None:
    pid = s.client._server.pid
    await s.until(lambda: server_descendants(pid) == [], timeout=20)
    await s.until(lambda: not any(s.tmpdir.iterdir()), timeout=20)


async def test_a_second_run_on_the_same_file_is_refused_while_another_file_may_run(lsp_session, scripted_llm):
    script_fix(scripted_llm, coder_answer=Fault.hang(60))
    async with lsp_session() as s:
        uri = s.open("calc.py")
        first = await s.command("agentls.planAndFix", {"uri": uri})
        second = await s.command("agentls.generateTests", {"uri": uri})
        assert first["runId"] and second["runId"] is None and first["runId"] in second["error"]
        assert any("already going on calc.py" in m for m in s.messages())
        other = await s.command("agentls.runTests", {"uri": s.uri("tests/test_calc.py")})
        assert other["runId"] and other["runId"] != first["runId"]
        answer = await s.command("agentls.cancel", {})
        assert set(answer["cancelled"]) == {first["runId"], other["runId"]}
        await _no_leftovers(s)
        await s.until(lambda: _ended(s, first["runId"]), timeout=30)
        assert not any("internal error" in m for m in s.messages())


async def test_show_report_writes_the_page_into_the_run_folder(lsp_session):
    async with lsp_session() as s:
        run_id = (await s.command("agentls.runTests", {}))["runId"]
        await s.until(lambda: _done(s, run_id))
        latest = await s.command("agentls.showReport", {})
        named = await s.command("agentls.showReport", {"runId": run_id})
        assert latest["runId"] == named["runId"] == run_id
        path = Path(named["path"])
        assert path.resolve() == (s.root / ".agentls" / "runs" / run_id / "report.html").resolve()
        assert Path(url2pathname(urlparse(named["uri"]).path)) == path.resolve()
        page = path.read_text(encoding="utf-8")
        assert page.startswith("<!DOCTYPE html>") and run_id in page and 'id="verdict"' in page  # a test run: no graph
        try:
            await s.command("agentls.showReport", {"runId": "no-such-run"})
        except JsonRpcException as exc:
            assert "no-such-run" in str(exc)
        else:
            raise AssertionError("an unknown run id must be an error")
