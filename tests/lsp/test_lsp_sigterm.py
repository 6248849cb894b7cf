"""SIGTERM to the language server (a supervisor, `kill`) cancels its runs before it exits: nothing is left behind."""

from __future__ import annotations

import signal
from collections.abc import Iterator
from pathlib import Path

import pytest
from jsonrpc_raw import RawClient, request
from lsp_support import make_workspace

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from testkit.scripted_llm import Fault, ScriptedLLM


@pytest.fixture
def base() -> Iterator[Path]:
    """A temp dir the sandbox uid can reach, with a private TMPDIR inside."""
    path = make_temp_dir("lsptest")
    path.chmod(0o755)
    (path / "tmp").mkdir(mode=0o755)
    try:
        yield path
    finally:
        remove_temp_dir(path)


def test_sigterm_cancels_a_run_waiting_on_the_model_and_leaves_nothing(base: Path) -> None:
    root = make_workspace(base / "ws")
    with ScriptedLLM() as llm:
        llm.default("*", Fault.hang(300))
        client = RawClient(root, env={"TMPDIR": str(base / "tmp"), "AGENTLS_API_KEY": "sk-test-SECRET-0123456789"})
        try:
            client.initialize({"baseUrl": llm.base_url})
            answer = client.wait_for_sent(request(1, "workspace/executeCommand", {
                "command": "agentls.planAndFix", "arguments": [{"uri": (root / "calc.py").as_uri()}]}), 1)
            assert answer["result"]["runId"], answer
            client.wait_until(lambda: llm.requests, "a model request")
            assert list((base / "tmp").glob("agentls-shadow-*")), "the run works on a copy"
            client.proc.send_signal(signal.SIGTERM)
            assert client.proc.wait(timeout=60) == 128 + signal.SIGTERM
        finally:
            if client.proc.poll() is None:
                client.proc.kill()
                client.proc.wait()
    assert list((base / "tmp").iterdir()) == [], "the run's shadow copy was removed before the exit"
    assert not list((root / ".agentls").rglob("run.lock"))
