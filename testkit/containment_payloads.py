"""Hostile test files and the host checks that prove each was contained (used by the suite and by bench/).

Every payload is an ordinary pytest file written into a fresh workspace and run
through the real test runner. A payload's test *passes* only when its attack
worked, so a contained payload is reported as failed (or timed out). After the
run the host is inspected: files that must not exist, a listener that must not
have been reached, no process left behind (by command-line marker or by a cwd
inside the arena), no agentls container and no temp dir of ours left over.
"""

from __future__ import annotations

import os
import socket
import tempfile
import threading
import time
import uuid
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.models import TestReport
from agent_core.sandbox.cleanup import PREFIX, owner_alive
from agent_core.testing.runner import run_tests

HOST_HOME = Path(os.path.expanduser("~"))
# TEST-NET-1 (RFC 5737): a documentation address no real host answers; only isolated backends try it.
PUBLIC_ADDRESS = "192.0.2.1"

_HEADER = "import os, socket, subprocess, sys, time, glob\n\n\ndef test_payload():\n"


@dataclass
class Ctx:
    """What one payload run knows: its arena, a unique tag, a host listener."""

    root: Path
    tag: str = field(default_factory=lambda: uuid.uuid4().hex[:10])
    port: int = 0
    secret: str = field(default_factory=lambda: f"sk-containment-{uuid.uuid4().hex}")
    cleanup: list[Path] = field(default_factory=list)

    @property
    def ws(self) -> Path:
        return self.root / "ws"

    @property
    def outside(self) -> Path:
        return self.root / "outside"

    @property
    def marker(self) -> str:
        return f"agentls-escapee-{self.tag}"


@dataclass(frozen=True)
class Payload:
    name: str
    body: str  # the test function's body, formatted with the Ctx
    expect: str = "fail"  # "fail" or "timeout"
    setup: Callable[[Ctx], None] | None = None
    leaked: Callable[[Ctx], list[str]] = lambda ctx: []  # host-side evidence that the attack worked


def _exists(*paths: Callable[[Ctx], Path]) -> Callable[[Ctx], list[str]]:
    return lambda ctx: [f"{p(ctx)} was created" for p in paths if os.path.lexists(p(ctx))]


def _plant(path: Callable[[Ctx], Path]) -> Callable[[Ctx], None]:
    """Put a readable secret file on the host (removed after the run)."""

    def setup(ctx: Ctx) -> None:
        target = path(ctx)
        if not target.parent.exists():
            target.parent.mkdir(mode=0o700)
            ctx.cleanup.append(target.parent)
        target.write_text(ctx.tag)
        os.chmod(target, 0o644)
        ctx.cleanup.insert(0, target)

    return setup


def _symlink_out(ctx: Ctx) -> None:
    (ctx.ws / "link").symlink_to(ctx.outside / f"target-{ctx.tag}")


def _escapee(spawn: str) -> str:
    return (f"    cmd = [sys.executable, '-c', 'import time; time.sleep(120)', '{{ctx.marker}}']\n{spawn}"
            "    time.sleep(0.5)\n    assert False, 'escapee spawned'\n")


PAYLOADS = [
    Payload("connect-loopback", "    socket.create_connection(('127.0.0.1', {ctx.port}), timeout=2).sendall(b'hi')\n",
            leaked=lambda ctx: ["the host listener was reached"] if ctx.port in _REACHED else []),
    Payload("connect-public", f"    socket.create_connection(('{PUBLIC_ADDRESS}', 80), timeout=2)\n"),
    Payload("dns-lookup", "    assert socket.getaddrinfo('example.com', 80)\n"),
    Payload("write-etc", "    open('/etc/agentls-pwned-{ctx.tag}', 'w').write('x')\n",
            leaked=_exists(lambda c: Path(f"/etc/agentls-pwned-{c.tag}"))),
    Payload("write-home", "    open('{home}/agentls-pwned-{ctx.tag}', 'w').write('x')\n",
            leaked=_exists(lambda c: HOST_HOME / f"agentls-pwned-{c.tag}")),
    Payload("write-parent", "    open('{ctx.root}/pwned-{ctx.tag}', 'w').write('x')\n",
            leaked=_exists(lambda c: c.root / f"pwned-{c.tag}")),
    Payload("write-symlink", "    open('link', 'w').write('x')\n", setup=_symlink_out,
            leaked=_exists(lambda c: c.outside / f"target-{c.tag}")),
    Payload("read-root", "    assert '{ctx.tag}' in open('/root/agentls-secret-{ctx.tag}').read()\n",
            setup=_plant(lambda c: Path(f"/root/agentls-secret-{c.tag}"))),
    Payload("read-ssh", "    assert '{ctx.tag}' in open('{home}/.ssh/id_agentls_{ctx.tag}').read()\n",
            setup=_plant(lambda c: HOST_HOME / ".ssh" / f"id_agentls_{c.tag}")),
    Payload("read-api-key", (
        "    keys = [k for k in os.environ if k.endswith('_API_KEY')]\n"
        "    leaked = []\n"
        "    for p in glob.glob('/proc/[0-9]*/environ'):\n"
        "        try:\n            leaked += [p] if b'{ctx.secret}' in open(p, 'rb').read() else []\n"
        "        except OSError:\n            pass\n"
        "    assert keys or leaked\n")),
    Payload("fork-bomb", (
        "    for _ in range(500):\n        if os.fork() == 0:\n            time.sleep(60)\n            os._exit(0)\n")),
    Payload("allocate-4gib", "    b = bytearray(4 * 1024 ** 3)\n    assert len(b) == 4 * 1024 ** 3\n"),
    Payload("fill-disk-2gib", (
        "    chunk = b'\\0' * (1 << 20)\n    with open('big.bin', 'wb') as f:\n"
        "        for _ in range(2048):\n            f.write(chunk)\n"),
            leaked=lambda c: [f"big.bin reached {s >> 20} MiB"] if (s := _size(c.ws / "big.bin")) > 64 << 20 else []),
    Payload("busy-loop", "    while True:\n        pass\n", expect="timeout"),
    Payload("sleep", "    time.sleep(600)\n", expect="timeout"),
    Payload("daemon-child", _escapee(
        "    if os.fork() == 0:\n        os.setsid()\n        if os.fork() == 0:\n"
        "            os.execv(cmd[0], cmd)\n        os._exit(0)\n")),
    Payload("setsid-escape", _escapee("    subprocess.Popen(cmd, start_new_session=True)\n")),
]
BY_NAME = {p.name: p for p in PAYLOADS}

_REACHED: set[int] = set()


def _size(path: Path) -> int:
    try:
        return path.stat().st_size
    except OSError:
        return 0


class Listener:
    """A real TCP listener on the host's 127.0.0.1 that records whether anyone connected."""

    def __init__(self) -> None:
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(8)
        self.sock.settimeout(0.2)
        self.port = self.sock.getsockname()[1]
        self._stop = threading.Event()
        self._thread = threading.Thread(target=self._serve, daemon=True)
        self._thread.start()

    def _serve(self) -> None:
        while not self._stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                continue
            _REACHED.add(self.port)
            conn.close()

    def close(self) -> None:
        self._stop.set()
        self._thread.join(2)
        self.sock.close()


@dataclass
class Outcome:
    payload: str
    contained: bool
    report: TestReport
    evidence: list[str]


def leftovers(ctx: Ctx, containers_before: set[str], list_containers: Callable[[], list[str]]) -> list[str]:
    """Processes, containers and temp dirs the run left behind (polled briefly: killing takes a moment)."""
    found: list[str] = []
    for _ in range(30):
        found = [f"process {pid} survived" for pid in _run_processes(ctx)]
        found += [f"container {n} left" for n in set(list_containers()) - containers_before]
        found += [f"temp dir {d} left" for d in _our_temp_dirs() if d != ctx.root]
        if not found:
            return []
        time.sleep(0.1)
    return found


def agentls_containers() -> list[str]:
    """agentls containers this process started (empty when no engine is configured)."""
    if not os.environ.get("DOCKER_HOST"):
        return []
    from agent_core.sandbox.docker import engine

    client = engine.connect()
    try:
        labels = ["agentls.run=1", f"agentls.owner_pid={os.getpid()}"]
        return [c.name for c in client.containers.list(all=True, filters={"label": labels})]
    finally:
        client.close()


def _run_processes(ctx: Ctx) -> list[int]:
    needle, root = ctx.marker.encode(), str(ctx.root)
    pids = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit() or int(entry.name) == os.getpid():
            continue
        try:
            if needle in (entry / "cmdline").read_bytes() or os.readlink(entry / "cwd").startswith(root):
                pids.append(int(entry.name))
        except OSError:
            continue
    return pids


def _our_temp_dirs() -> list[Path]:
    out = []
    for path in Path(tempfile.gettempdir()).glob(f"{PREFIX}*"):
        marker = path / ".agentls-owner"
        try:
            mine = marker.read_text().split()[0] == str(os.getpid())
        except (OSError, IndexError):
            continue
        if mine and owner_alive(path):
            out.append(path)
    return out


async def run_payload(sandbox, root: Path, payload: Payload, list_containers: Callable[[], list[str]]) -> Outcome:
    """Run one payload in `sandbox` on `root/ws` and judge containment from the report and the host."""
    ctx = Ctx(root)
    listener = Listener()
    ctx.port = listener.port
    os.environ["AGENTLS_CONTAINMENT_API_KEY"] = ctx.secret
    before = set(list_containers())
    try:
        if payload.setup:
            payload.setup(ctx)
        body = payload.body.format(ctx=ctx, home=HOST_HOME)
        (ctx.ws / "test_payload.py").write_text(_HEADER + body)
        report = await run_tests(sandbox, ctx.ws, "pytest")
        evidence = payload.leaked(ctx) + leftovers(ctx, before, list_containers)
        reported = report.timed_out if payload.expect == "timeout" else (report.passed == 0 and not report.ok)
        if not reported:
            evidence.append(f"reported as passed={report.passed} timed_out={report.timed_out} "
                            f"(expected {payload.expect})")
        return Outcome(payload.name, not evidence, report, evidence)
    finally:
        listener.close()
        os.environ.pop("AGENTLS_CONTAINMENT_API_KEY", None)
        for path in ctx.cleanup:
            path.rmdir() if path.is_dir() else path.unlink(missing_ok=True)
        for path in (Path(f"/etc/agentls-pwned-{ctx.tag}"), HOST_HOME / f"agentls-pwned-{ctx.tag}"):
            path.unlink(missing_ok=True)
