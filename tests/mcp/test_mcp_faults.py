"""The MCP edge of the fault-injection suite: malformed calls get an error result, never a crash."""

from __future__ import annotations

import contextlib
import json
import os
import signal
import subprocess
import tempfile
import time
from pathlib import Path

import anyio
import pytest
from mcp_support import AGENTLS, CALC, REPO, server_descendants, until

OUTSIDE = "--- a/../evil.py\n+++ b/../evil.py\n@@ -1 +1 @@\n-a\n+b\n"
MISSING_FILE = "--- a/nope.py\n+++ b/nope.py\n@@ -1 +1 @@\n-a\n+b\n"
STALE = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a / b\n+    return a + b\n"


async def test_malformed_calls_get_error_results_and_the_server_keeps_serving(mcp_session):
    async with mcp_session() as s:
        project = str(s.project)
        cases = [
            ("run_tests", {}, "project"),
            ("run_tests", {"project": 5}, "project"),
            ("run_tests", {"project": project, "tests": "tests/test_calc.py"}, "tests"),
            ("run_tests", {"project": project + "/calc.py"}, "is not a directory"),
            ("run_tests", {"project": project + "\x00"}, "directory path"),
            ("verify_patch", {"project": project}, "diff"),
            ("verify_patch", {"project": project, "diff": ""}, "the diff is empty"),
            ("verify_patch", {"project": project, "diff": "not a diff at all"}, "the diff cannot be read"),
            ("verify_patch", {"project": project, "diff": MISSING_FILE}, "does not apply"),
            ("verify_patch", {"project": project, "diff": STALE}, "does not apply"),
            ("verify_patch", {"project": project, "diff": ["x"]}, "diff"),
            ("gen_tests", {"project": project, "file": "../../etc/passwd"}, "outside the project"),
            ("localize", {"project": project, "test_cmd": 7}, "test_cmd"),
        ]
        for name, arguments, says in cases:
            result = await s.client.call_tool(name, arguments)
            assert result.is_error, (name, arguments, result)
            assert says in result.content[0].text, (name, arguments, result.content[0].text)
        unknown = await s.client.call_tool("no_such_tool", {})
        assert unknown.is_error and unknown.content[0].text == "Unknown tool: no_such_tool"
        refused = await s.client.call_tool("verify_patch", {"project": project, "diff": OUTSIDE})
        assert refused.structured_content["refused"].startswith("../evil.py is outside the project")
        assert (s.project / "calc.py").read_text() == CALC["calc.py"]
        tools = await s.client.list_tools()
        assert {t.name for t in tools.tools} == {"run_tests", "verify_patch", "localize", "quick_fix", "fix",
                                                 "gen_tests"}


def test_garbage_on_stdin_is_answered_or_skipped_and_the_server_still_initializes(tmp_path):
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    init = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-06-18", "capabilities": {}, "clientInfo": {"name": "raw", "version": "0"}}}
    lines = ["this is not json", "{\"jsonrpc\": \"2.0\", \"id\": 9, \"method\": 5}", "[1, 2", json.dumps(init)]
    done = subprocess.run([str(AGENTLS), "mcp", "--root", str(tmp_path)], input="\n".join(lines) + "\n",
                          capture_output=True, text=True, timeout=60, env=env, cwd=tmp_path, check=False)
    answers = [json.loads(line) for line in done.stdout.splitlines() if line.strip()]
    initialized = [a for a in answers if a.get("id") == 1]
    assert initialized and initialized[0]["result"]["serverInfo"]["name"] == "agentls", (answers, done.stderr[-2000:])
    assert done.returncode == 0 and "Traceback" not in done.stderr, done.stderr[-2000:]


async def test_sigterm_during_a_run_cancels_it_and_exits_with_no_leftovers(mcp_session):
    slow = {**CALC, "tests/test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(60)\n"}
    async with mcp_session(slow) as s:
        pid = s.pid
        assert pid > 0

        async def call() -> None:
            with contextlib.suppress(Exception):  # the connection ends with the server
                await s.call("run_tests", project=str(s.project))

        async with anyio.create_task_group() as group:
            group.start_soon(call)
            await until(lambda: len(server_descendants(pid)) > 1 and any(s.tmpdir.iterdir()), timeout=60)
            await anyio.sleep(1.0)  # pytest under way in the sandbox
            os.kill(pid, signal.SIGTERM)
            await until(lambda: not Path(f"/proc/{pid}").exists() or _zombie(pid), timeout=40)
            group.cancel_scope.cancel()
        assert server_descendants(pid) == [] and not any(s.tmpdir.iterdir())


def _zombie(pid: int) -> bool:
    try:
        return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0] == "Z"
    except OSError:
        return True


def test_a_client_that_closes_stdin_mid_run_leaves_no_temp_dir(tmp_path: Path):
    project = tmp_path / "proj"
    (project / "tests").mkdir(parents=True)
    (project / "tests" / "test_slow.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(60)\n")
    tmpdir = tmp_path / "tmp"
    tmpdir.mkdir(mode=0o1777)
    tmpdir.chmod(0o1777)
    for parent in tmp_path.parents:  # pytest's own dirs are 0700: the sandbox uid must reach the copy made in TMPDIR
        if parent == Path(tempfile.gettempdir()):
            break
        parent.chmod(parent.stat().st_mode | 0o011)
    tmp_path.chmod(tmp_path.stat().st_mode | 0o011)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmpdir)}
    server = subprocess.Popen([str(AGENTLS), "mcp", "--root", str(tmp_path)], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env, text=True)
    try:
        for message in ({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                            "protocolVersion": "2025-06-18", "capabilities": {},
                            "clientInfo": {"name": "raw", "version": "0"}}},
                        {"jsonrpc": "2.0", "method": "notifications/initialized"},
                        {"jsonrpc": "2.0", "id": 2, "method": "tools/call",
                         "params": {"name": "run_tests", "arguments": {"project": str(project)}}}):
            server.stdin.write(json.dumps(message) + "\n")
            server.stdin.flush()
        deadline = time.monotonic() + 60
        while not any(p.name.startswith("agentls-shadow-") for p in tmpdir.iterdir()):
            if time.monotonic() > deadline or server.poll() is not None:  # never block on a live server's stderr
                server.kill()
                out, err = server.communicate(timeout=30)
                names = sorted(p.name for p in tmpdir.iterdir())
                pytest.fail(f"no shadow copy in {names}: {out[-3000:]} {err[-3000:]}")
            time.sleep(0.2)
        time.sleep(1.0)  # the tests under way in the sandbox
        server.stdin.close()
        assert server.wait(60) == 0
        assert list(tmpdir.iterdir()) == []
    finally:
        if server.poll() is None:
            server.kill()
            server.wait()
