"""`agentls mcp --http PORT`: streamable HTTP on loopback, with the zero-token tools (localize, quick_fix)."""

from __future__ import annotations

import os
import socket
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client
from mcp_support import AGENTLS, CALC, REPO

from testkit.project_support import make_project


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def _wait_listening(port: int, server: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read() if server.stderr else "the server exited"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


async def test_http_on_loopback_serves_localize_and_quick_fix(tmp_path: Path):
    project = make_project(tmp_path / "proj", CALC)
    port = _free_port()
    tmpdir = Path(tempfile.mkdtemp(prefix="agentls-mcp-tmp-"))
    tmpdir.chmod(0o1777)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmpdir), "AGENTLS_SEARCH": "1"}
    server = subprocess.Popen([str(AGENTLS), "mcp", "--http", str(port), "--root", str(tmp_path)], env=env,
                              stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, text=True)
    try:
        _wait_listening(port, server)
        async with Client(f"http://127.0.0.1:{port}/mcp", read_timeout_seconds=180) as client:
            where = await client.call_tool("localize", {"project": str(project)})
            assert not where.is_error, where.content
            top = where.structured_content["suspects"][0]
            assert (top["file"], top["function"], top["lines"][0]) == ("calc.py", "add", 2)
            assert where.structured_content["evidence"] == "coverage"

            fix = await client.call_tool("quick_fix", {"project": str(project)})
            data = fix.structured_content
            assert data["found"] is True and data["change"] == "`a - b` -> `a + b`", fix.content
            assert "+    return a + b" in data["diff"] and (project / "calc.py").read_text() == CALC["calc.py"]

            outside = await client.call_tool("run_tests", {"project": str(REPO)})
            assert outside.is_error and "outside the server's --root directories" in outside.content[0].text
        with anyio.fail_after(10):
            while any(tmpdir.iterdir()):
                await anyio.sleep(0.2)
    finally:
        server.terminate()
        server.wait(30)
        for leftover in tmpdir.iterdir():
            subprocess.run(["rm", "-rf", str(leftover)], check=False)
        tmpdir.rmdir()
