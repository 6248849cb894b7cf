"""The server's end (shutdown, exit) waits for every run's and background search's clean-up: nothing left behind.

The soak found one shadow copy left per 30 minutes of random starts, edits
and cancels. These tests end the server at the moments that leaked: right
after an edit cancelled the background search (the cancelled search was
still removing its sandbox and copy), and with an `exit` that came without
a `shutdown`.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path
from types import SimpleNamespace

import pytest
from jsonrpc_raw import RawClient, frame, request
from lsp_support import FIXED_CALC, make_workspace, server_descendants

from agent_core.models import TestFailure as Failure
from agent_core.models import TestReport as Report
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from lsp_server.documents import Snapshot
from lsp_server.quickfixes import QuickFixes, SearchInput
from testkit.scripted_llm import Fault, ScriptedLLM

COUNT = 'def count_up(n):\n    """1, 2, ..., n."""\n    return list(range(1, n))\n'
SLOW_TESTS = (  # the suite takes a few seconds, so the background search is caught mid-way
    "import time\n\nfrom count import count_up\n\n\n"
    "def test_count_up():\n    assert count_up(3) == [1, 2, 3]\n\n\n"
    + "".join(f"def test_slow_{i}():\n    time.sleep(0.3)\n\n\n" for i in range(8))
)


@pytest.fixture
def base() -> Iterator[Path]:
    """A temp dir the sandbox uid can reach, with a private TMPDIR inside."""
    path = make_temp_dir("lsptest")
    path.chmod(0o755)
    (path / "tmp").mkdir(mode=0o1777)
    try:
        yield path
    finally:
        remove_temp_dir(path)


def _notify(client: RawClient, method: str, params: dict | None = None) -> None:
    client.send(frame({"jsonrpc": "2.0", "method": method, "params": params}))


def _left(base: Path) -> list[str]:
    return sorted(p.name for p in (base / "tmp").iterdir())


def test_shutdown_right_after_an_edit_cancelled_the_search_waits_for_its_clean_up(base: Path) -> None:
    root = make_workspace(base / "ws")
    (root / "calc.py").write_text(FIXED_CALC)
    (root / "count.py").write_text(COUNT)
    (root / "tests" / "test_count.py").write_text(SLOW_TESTS)
    uri = (root / "count.py").as_uri()
    with ScriptedLLM() as llm:
        client = RawClient(root, env={"TMPDIR": str(base / "tmp")})
        try:
            client.initialize({"baseUrl": llm.base_url, "search": {"enabled": True}, "memory": {"enabled": False}})
            _notify(client, "textDocument/didOpen", {"textDocument": {
                "uri": uri, "languageId": "python", "version": 1, "text": COUNT}})
            answer = client.wait_for_sent(request(1, "workspace/executeCommand", {
                "command": "agentls.runTests", "arguments": [{}]}), 1)
            assert answer["result"]["runId"], answer
            # the test run's sandbox, then the search's (its localization runs the slow suite again)
            client.wait_until(lambda: any(m.get("method") == "textDocument/publishDiagnostics"
                                          for m in client.drain()), "the failing test's diagnostics")
            client.wait_until(lambda: server_descendants(client.proc.pid), "the search's sandbox")
            _notify(client, "textDocument/didChange", {
                "textDocument": {"uri": uri, "version": 2},
                "contentChanges": [{"text": COUNT.replace("range(1, n)", "range(0, n)")}]})
            assert client.close() == 0
            assert llm.requests == [], "the background search never calls the model"
        finally:
            if client.proc.poll() is None:
                client.proc.kill()
                client.proc.wait()
    assert server_descendants(client.proc.pid) == []
    assert _left(base) == [], "the cancelled search's copy and sandbox were removed before the exit"


def test_an_exit_without_shutdown_cancels_a_run_and_waits_for_its_clean_up(base: Path) -> None:
    root = make_workspace(base / "ws")
    with ScriptedLLM() as llm:
        llm.default("*", Fault.hang(300))
        client = RawClient(root, env={"TMPDIR": str(base / "tmp")})
        try:
            client.initialize({"baseUrl": llm.base_url, "memory": {"enabled": False}})
            answer = client.wait_for_sent(request(1, "workspace/executeCommand", {
                "command": "agentls.planAndFix", "arguments": [{"uri": (root / "calc.py").as_uri()}]}), 1)
            assert answer["result"]["runId"], answer
            client.wait_until(lambda: llm.requests, "a model request")
            assert any(n.startswith("agentls-shadow-") for n in _left(base)), "the run works on a copy"
            _notify(client, "exit")
            assert client.proc.wait(timeout=60) == 1  # exit without shutdown: 1, as the protocol says
        finally:
            if client.proc.poll() is None:
                client.proc.kill()
                client.proc.wait()
    assert _left(base) == []
    assert not list((root / ".agentls").rglob("run.lock"))


FAILING = Report(passed=0, failed=1, failures=[Failure(nodeid="t.py::test_a", file="t.py", line=3, message="x")])


async def test_after_the_shutdown_a_run_that_ends_starts_no_search() -> None:
    """A test run cancelled by the shutdown ends after it, with its failing report: no search may start then."""
    documents = SimpleNamespace(snapshot=lambda root: Snapshot({}, {}))
    fixes = QuickFixes(server=None, documents=documents, settings=None, edits=None, diagnostics=None,
                       runs=SimpleNamespace(active={}))
    await fixes.stop()
    fixes.start(SearchInput(FAILING, Path("/ws"), Snapshot({}, {}), {}))
    assert fixes.task is None and fixes.current is None
    await asyncio.sleep(0)
