"""Tiny probe runs that check a sandbox's limits actually hold (for `agentls sandbox doctor` and the bench).

Each probe runs a few lines of Python through `Sandbox.run` on a throwaway
workspace and decides from the result *and from the host* (a file that must
not appear, a listener that must not be reached) whether the limit held.
No probe sends traffic off this machine: the network probe looks at the
sandbox's interfaces and tries a listener the probe opens on 127.0.0.1.
"""

from __future__ import annotations

import asyncio
import os
import socket
import uuid
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir

FAKE_KEY_VAR = "AGENTLS_PROBE_API_KEY"


@dataclass(frozen=True)
class ProbeResult:
    """One limit, whether it held, and what was seen."""

    limit: str
    held: bool
    detail: str


async def _py(sandbox: Any, workspace: Path, code: str, timeout_s: float = 20.0) -> Any:
    return await sandbox.run([sandbox.python, "-c", code], workspace, timeout_s=timeout_s)


async def probe_network(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(4)
    port = listener.getsockname()[1]
    code = (
        "import socket\n"
        "names = [l.split(':')[0].strip() for l in open('/proc/net/dev').read().splitlines()[2:]]\n"
        "print('IFACES', ','.join(sorted(names)))\n"
        f"s = socket.socket(); s.settimeout(2)\n"
        f"try:\n    s.connect(('127.0.0.1', {port})); print('CONNECTED')\n"
        "except OSError as e:\n    print('REFUSED', e)\n"
    )
    try:
        result = await _py(sandbox, workspace, code)
    finally:
        listener.close()
    ifaces = next((line.split()[1] if len(line.split()) > 1 else "" for line in result.stdout.splitlines()
                   if line.startswith("IFACES")), "?")
    held = "CONNECTED" not in result.stdout and ifaces in ("lo", "")
    return ProbeResult("no network", held, f"interfaces: {ifaces or 'none'}; host listener "
                       + ("reached" if "CONNECTED" in result.stdout else "unreachable"))


async def probe_writes(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    tag = uuid.uuid4().hex[:8]
    targets = [Path("/etc") / f"agentls-probe-{tag}", workspace.parent / f"agentls-probe-{tag}"]
    code = "import sys\nfor p in sys.argv[1:]:\n    try:\n        open(p, 'w').write('x'); print('WROTE', p)\n" \
           "    except OSError as e:\n        print('REFUSED', p, e.__class__.__name__)\n"
    result = await sandbox.run([sandbox.python, "-c", code, *map(str, targets)], workspace, timeout_s=20.0)
    leaked = [p for p in targets if p.exists()]
    for path in leaked:
        path.unlink()
    inside_ok = result.exit_code == 0
    return ProbeResult("writes only in workspace", not leaked and inside_ok,
                       f"outside files created on host: {len(leaked)}; probe exit {result.exit_code}")


async def probe_memory(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    size = (limits.memory_mb + 256) * 1024 * 1024
    result = await _py(sandbox, workspace, f"b = bytearray({size}); print('ALLOCATED', len(b))")
    held = "ALLOCATED" not in result.stdout and result.exit_code != 0
    return ProbeResult("memory limit", held, f"{limits.memory_mb + 256} MiB: exit {result.exit_code}, "
                       f"limit_hit={result.limit_hit}")


_TMPFS_CODE = """
import os, sys
limit = int(sys.argv[1]) * 2**20
chunk = b"\\0" * 2**20
for folder in ("/tmp", "/dev/shm"):
    st = os.statvfs(folder)
    written, paths, error = 0, [], "-"
    try:
        while written < limit:
            paths.append(os.path.join(folder, "agentls-tmpfs-probe-%d-%d" % (os.getpid(), len(paths))))
            with open(paths[-1], "wb") as handle:
                for _ in range(32):
                    if written >= limit:
                        break
                    handle.write(chunk)
                    written += len(chunk)
    except OSError as exc:
        error = type(exc).__name__
    finally:
        for path in paths:
            try:
                os.unlink(path)
            except OSError:
                pass
    print("TMPFS", folder, st.f_blocks * st.f_frsize // 2**20, written // 2**20, error)
"""


async def probe_tmpfs(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    """Write more than the memory setting into /tmp and /dev/shm: a tmpfs is host RAM the memory limit does not
    count, so each must be sized below the setting and stop the writer there (the files are removed at once)."""
    want = limits.memory_mb + 64
    result = await sandbox.run([sandbox.python, "-c", _TMPFS_CODE, str(want)], workspace, timeout_s=60.0)
    seen = [line.split()[1:] for line in result.stdout.splitlines() if line.startswith("TMPFS ")]
    held = len(seen) == 2 and all(int(size) <= limits.memory_mb and int(written) < want for _, size, written, _ in seen)
    detail = "; ".join(f"{folder}: size {size} MiB, a {want} MiB write stopped at {written} MiB ({error})"
                       for folder, size, written, error in seen)
    return ProbeResult("tmpfs bounded", held, detail or f"probe exit {result.exit_code}: {result.stderr[-200:]}")


async def probe_pids(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    want = limits.pids + 32
    code = (
        "import os, time\nn = 0\n"
        f"for _ in range({want}):\n"
        "    try:\n        pid = os.fork()\n    except OSError:\n        break\n"
        "    if pid == 0:\n        time.sleep(30); os._exit(0)\n    n += 1\n"
        "print('FORKED', n)\n"
    )
    result = await _py(sandbox, workspace, code, timeout_s=30.0)
    forked = next((int(line.split()[1]) for line in result.stdout.splitlines() if line.startswith("FORKED")), None)
    held = forked is not None and forked < want
    return ProbeResult("process limit", held, f"asked for {want} processes (limit {limits.pids}), got {forked}")


async def probe_timeout(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    result = await _py(sandbox, workspace, "import time; time.sleep(120)", timeout_s=2.0)
    held = result.timed_out and result.duration_s < 15
    return ProbeResult("timeout kill", held, f"2 s limit: timed_out={result.timed_out}, took {result.duration_s:.1f} s")


async def probe_env(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    secret = f"sk-probe-{uuid.uuid4().hex}"
    previous = os.environ.get(FAKE_KEY_VAR)
    os.environ[FAKE_KEY_VAR] = secret
    try:
        code = "import os; print('\\n'.join(f'{k}={v}' for k, v in os.environ.items()))"
        result = await _py(sandbox, workspace, code)
    finally:
        if previous is None:
            os.environ.pop(FAKE_KEY_VAR, None)
        else:
            os.environ[FAKE_KEY_VAR] = previous
    names = [line.split("=", 1)[0] for line in result.stdout.splitlines() if "=" in line]
    suspicious = [n for n in names if any(w in n.upper() for w in ("KEY", "TOKEN", "SECRET", "PASSWORD"))]
    held = result.exit_code == 0 and secret not in result.stdout and not suspicious
    return ProbeResult("no secrets in env", held, f"{len(names)} variables; secret-like: {suspicious or 'none'}")


PROBES: tuple[Callable[[Any, Path, Any], Awaitable[ProbeResult]], ...] = (
    probe_network, probe_writes, probe_memory, probe_tmpfs, probe_pids, probe_timeout, probe_env,
)


async def run_probes(
    sandbox: Any, limits: Any, extra: tuple[Callable[[Any, Path, Any], Awaitable[ProbeResult]], ...] = (),
) -> list[ProbeResult]:
    """Run every probe (and the `extra` ones), each on a fresh workspace; a probe that crashes counts as not
    held."""
    results = []
    for probe in (*PROBES, *extra):
        workspace = make_temp_dir("probe")
        try:
            results.append(await probe(sandbox, workspace, limits))
        except Exception as exc:  # noqa: BLE001 - a broken probe is reported, not raised
            results.append(ProbeResult(probe.__name__.removeprefix("probe_"), False, f"probe failed: {exc}"))
        finally:
            remove_temp_dir(workspace)
        await asyncio.sleep(0)
    return results


def format_table(results: list[ProbeResult]) -> str:
    width = max(len(r.limit) for r in results)
    lines = [f"{'limit'.ljust(width)}  holds  detail"]
    lines += [f"{r.limit.ljust(width)}  {'yes' if r.held else 'NO '}    {r.detail}" for r in results]
    return "\n".join(lines)
