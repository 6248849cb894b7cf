"""Isolation: no network, no writes outside the workspace, no secrets in the environment."""

from __future__ import annotations

import os
import socket
import threading
from pathlib import Path

import pytest
from sandbox_support import make_backend

from agent_core.testing.runner import run_tests


@pytest.fixture
def listening_port():
    """A real TCP server on the host's 127.0.0.1 that accepts connections."""
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(8)
    accepted: list[object] = []

    def serve() -> None:
        try:
            while True:
                conn, _ = server.accept()
                accepted.append(conn)
        except OSError:
            pass

    threading.Thread(target=serve, daemon=True).start()
    yield server.getsockname()[1]
    server.close()


async def test_connect_to_host_loopback_fails_inside_bubblewrap(workspace: Path, listening_port: int) -> None:
    # the host side really listens: a connection from here succeeds
    socket.create_connection(("127.0.0.1", listening_port), timeout=2).close()
    (workspace / "test_net.py").write_text(
        "import socket\n\n\ndef test_connect():\n"
        f"    socket.create_connection(('127.0.0.1', {listening_port}), timeout=2).close()\n"
    )
    report = await run_tests(make_backend("bubblewrap"), workspace, timeout_s=60)
    assert report.failed == 1 and report.passed == 0
    failure = report.failures[0]
    assert failure.nodeid == "test_net.py::test_connect"
    assert "ConnectionRefusedError" in failure.message or "Network is unreachable" in failure.message
    assert failure.line == 5


async def test_write_outside_workspace_fails_inside_bubblewrap(workspace: Path) -> None:
    outside = workspace.parent / "outside.txt"
    code = (
        "import sys\nfrom pathlib import Path\nresults = []\n"
        "for target in sys.argv[1:]:\n"
        "    try:\n        Path(target).write_text('x')\n        results.append('wrote ' + target)\n"
        "    except OSError as exc:\n        results.append(type(exc).__name__)\n"
        "Path('inside.txt').write_text('ok')\nprint(results)\n"
    )
    sandbox = make_backend("bubblewrap")
    result = await sandbox.run(
        [sandbox.python, "-c", code, str(outside), "/etc/agentls-evil", "/usr/agentls-evil"], workspace
    )
    assert result.exit_code == 0, result.stderr
    assert "wrote" not in result.stdout
    assert not outside.exists() and not Path("/etc/agentls-evil").exists()
    assert (workspace / "inside.txt").read_text() == "ok"


@pytest.mark.parametrize("backend", ["bubblewrap", "process"])
async def test_environment_has_no_secrets(workspace: Path, backend: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_API_KEY", "sk-agentls-secret")
    monkeypatch.setenv("OPENAI_API_KEY", "sk-openai-secret")
    sandbox = make_backend(backend)
    caller_env = {"OPENAI_API_KEY": "sk-passed", "GITHUB_TOKEN": "ghp", "MY_SECRET_X": "s", "HARMLESS": "yes"}
    result = await sandbox.run(
        [sandbox.python, "-c", "import os; print(sorted(os.environ.items()))"], workspace, env=caller_env
    )
    assert result.exit_code == 0, result.stderr
    assert "('HARMLESS', 'yes')" in result.stdout
    for leaked in ("sk-agentls-secret", "sk-openai-secret", "sk-passed", "ghp", "API_KEY", "TOKEN", "SECRET"):
        assert leaked not in result.stdout
    assert "('HOME', '/tmp')" in result.stdout
    assert os.environ["AGENTLS_API_KEY"] == "sk-agentls-secret"  # the host's own env is untouched


async def test_a_workspace_that_is_not_a_private_copy_is_refused(tmp_path: Path) -> None:
    from agent_core.sandbox.base import SandboxError

    (tmp_path / "mine.py").write_text("x = 1\n")
    owner = (tmp_path / "mine.py").stat().st_uid
    sandbox = make_backend("bubblewrap")
    if os.geteuid() == 0:  # handing files to uid 65534 is only done to private copies
        with pytest.raises(SandboxError, match="private copy"):
            await sandbox.run(["true"], tmp_path)
    else:  # no uid switch: the caller's own files are used as they are
        assert (await sandbox.run(["true"], tmp_path)).exit_code == 0
    assert (tmp_path / "mine.py").stat().st_uid == owner
