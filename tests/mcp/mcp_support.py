"""Start `agentls mcp` over stdio and drive it with the MCP SDK's own client, on a temp project.

Each session runs the real server as a subprocess (`agentls mcp --root ...`)
with a private TMPDIR (so leftovers of its shadow copies are visible) and the
scripted OpenAI-compatible server as its endpoint, from the environment (the
tools never take an endpoint as an argument).
"""

from __future__ import annotations

import os
import shutil
import sys
import tempfile
from collections.abc import AsyncIterator, Callable
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import pytest
from mcp import Client, StdioServerParameters
from mcp.types import ListRootsResult, Root

from testkit.project_support import make_project

REPO = Path(__file__).resolve().parents[2]
AGENTLS = Path(sys.executable).with_name("agentls")
CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n",
    "tests/test_calc.py": (
        "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_mul():\n    assert mul(2, 3) == 6\n"
    ),
}
FIX_ADD = "--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n-    return a - b\n+    return a + b\n"


@dataclass
class Session:
    client: Client
    project: Path
    tmpdir: Path
    pid: int = 0
    progress: list[tuple[float, float | None, str | None]] = field(default_factory=list)

    async def call(self, name: str, **arguments):
        async def on_progress(progress: float, total: float | None, message: str | None) -> None:
            self.progress.append((progress, total, message))

        return await self.client.call_tool(name, arguments, progress_callback=on_progress)


def server_descendants(server_pid: int) -> list[int]:
    """Pids of every live descendant of `server_pid` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except OSError:
                continue
    found, frontier = [], [server_pid]
    while frontier:
        pid = frontier.pop()
        children = [child for child, parent in parents.items() if parent == pid]
        found += children
        frontier += children
    return found


def _server_pid(tmpdir: Path) -> int:
    """The pid of the `agentls mcp` process started with this TMPDIR (the SDK keeps its process to itself)."""
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            environ = (entry / "environ").read_bytes()
            cmdline = (entry / "cmdline").read_bytes()
        except OSError:
            continue
        if f"TMPDIR={tmpdir}".encode() in environ.split(b"\0") and b"mcp_server" in cmdline:
            return int(entry.name)
    return 0


async def until(predicate: Callable[[], bool], timeout: float = 30.0) -> None:
    with anyio.fail_after(timeout):
        while not predicate():
            await anyio.sleep(0.2)


@pytest.fixture
def mcp_session(tmp_path: Path, scripted_llm):
    """`async with mcp_session(files, roots=...) as s:` the real server on a temp project, initialised."""

    @asynccontextmanager
    async def start(files: dict[str, str] | None = None, client_roots: list[Path] | None = None,
                    server_roots: list[Path] | None = None,
                    extra_env: dict[str, str] | None = None) -> AsyncIterator[Session]:
        project = make_project(tmp_path / "proj", files or CALC)
        tmpdir = Path(tempfile.mkdtemp(prefix="agentls-mcp-tmp-"))  # under /tmp: the sandbox uid must reach it
        tmpdir.chmod(0o1777)
        env = {**os.environ, "TMPDIR": str(tmpdir), "PYTHONPATH": str(REPO), "AGENTLS_BASE_URL": scripted_llm.base_url,
               "AGENTLS_MODEL": "scripted", "AGENTLS_MEMORY__ENABLED": "false", "AGENTLS_SANDBOX__TIMEOUT_S": "60",
               **(extra_env or {})}
        args = ["mcp"] + [a for r in (server_roots or [tmp_path]) for a in ("--root", str(r))]
        params = StdioServerParameters(command=str(AGENTLS), args=args, env=env, cwd=str(tmp_path))
        roots_callback = None
        if client_roots is not None:
            async def roots_callback(_ctx) -> ListRootsResult:
                return ListRootsResult(roots=[Root(uri=r.as_uri(), name=r.name) for r in client_roots])

        try:
            async with Client(params, list_roots_callback=roots_callback, read_timeout_seconds=180) as client:
                session = Session(client, project, tmpdir, _server_pid(tmpdir))
                yield session
        finally:
            shutil.rmtree(tmpdir, ignore_errors=True)

    return start

