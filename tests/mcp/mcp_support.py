"""Start `agentls mcp` over stdio and drive it with the MCP SDK's own client, on a temp project.

Each session runs the real server as a subprocess (`agentls mcp --root ...`)
with a private TMPDIR (so leftovers of its shadow copies are visible) and the
scripted OpenAI-compatible server as its endpoint, from the environment (the
tools never take an endpoint as an argument).
"""

from __future__ import annotations

import os
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from collections.abc import AsyncIterator, Callable, Iterator
from contextlib import asynccontextmanager, contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import anyio
import httpx2
import pytest
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
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


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_listening(port: int, server: subprocess.Popen, timeout: float = 60.0) -> None:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        assert server.poll() is None, server.stderr.read() if server.stderr else "the server exited"
        with socket.socket() as probe:
            if probe.connect_ex(("127.0.0.1", port)) == 0:
                return
        time.sleep(0.2)
    raise AssertionError(f"nothing listens on 127.0.0.1:{port}")


@dataclass
class HttpServer:
    """An `agentls mcp --http` process, its port, its private state dir and the token it made."""

    process: subprocess.Popen
    port: int
    state: Path
    token: str | None

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/mcp"

    def token_file(self) -> Path:
        return self.state / "agentls" / f"mcp-http-{self.port}.token"

    def client(self, token: str | None = "", **kwargs) -> Client:
        """The SDK's client, sending `Authorization: Bearer <token>` (the server's own by default; None: no header)."""
        token = self.token if token == "" else token
        headers = {"Authorization": f"Bearer {token}"} if token is not None else {}
        http = httpx2.AsyncClient(headers=headers, timeout=httpx2.Timeout(30, read=300))
        return Client(streamable_http_client(self.url, http_client=http), read_timeout_seconds=180, **kwargs)


@contextmanager
def http_server(tmp_path: Path, args: list[str], env: dict[str, str]) -> Iterator[HttpServer]:
    """Start `agentls mcp --http PORT ARGS` with a private XDG_STATE_HOME; once it listens, its token is read from its
    token file (None with --no-auth). Stopped with SIGTERM at the end."""
    port, state = free_port(), tmp_path / "state"
    process = subprocess.Popen([str(AGENTLS), "mcp", "--http", str(port), *args],
                               env={**env, "XDG_STATE_HOME": str(state)}, stdout=subprocess.DEVNULL,
                               stderr=subprocess.PIPE, text=True)
    try:
        wait_listening(port, process)
        server = HttpServer(process, port, state, None)
        if "--no-auth" not in args:
            server.token = server.token_file().read_text().strip()
        yield server
    finally:
        process.terminate()
        process.wait(30)


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

