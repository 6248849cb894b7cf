"""Limits: wall-clock timeout, fork bomb, memory and file size, cancellation; on both backends."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_support import make_backend, processes_with

from agent_core.sandbox.uids import UID_BASE, UID_COUNT

BACKENDS = ["bubblewrap", "process"]

FORK_BOMB = """
import os, sys, time
origin = os.getpid()
reported = False
while True:
    try:
        os.fork()
    except OSError:
        if os.getpid() == origin and not reported:
            print("FORK-LIMIT", flush=True)
            reported = True
        time.sleep(0.2)
"""


async def _wait_gone(token: str, seconds: float = 5.0) -> list[int]:
    deadline = time.monotonic() + seconds
    while (left := processes_with(token)) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    return left


@pytest.mark.parametrize("backend", BACKENDS)
async def test_infinite_loop_is_killed_at_the_timeout(workspace: Path, backend: str, token: str) -> None:
    sandbox = make_backend(backend)
    started = time.monotonic()
    result = await sandbox.run([sandbox.python, "-c", "while True: pass", token], workspace, timeout_s=1.5)
    elapsed = time.monotonic() - started
    assert result.timed_out and result.exit_code is None
    assert elapsed > 1.4 and elapsed < 10
    assert await _wait_gone(token) == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_fork_bomb_is_contained(workspace: Path, backend: str, token: str) -> None:
    sandbox = make_backend(backend, pids=24)
    result = await sandbox.run([sandbox.python, "-c", FORK_BOMB, token], workspace, timeout_s=3)
    assert "FORK-LIMIT" in result.stdout  # fork failed inside: the process limit held
    assert result.timed_out
    assert await _wait_gone(token) == []
    # the host still works, and so does the sandbox
    assert subprocess.run(["true"], check=False).returncode == 0
    again = await sandbox.run([sandbox.python, "-c", "print('alive')"], workspace, timeout_s=20)
    assert again.exit_code == 0 and again.stdout.strip() == "alive"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_memory_limit_is_reported(workspace: Path, backend: str) -> None:
    sandbox = make_backend(backend, memory_mb=256)
    result = await sandbox.run([sandbox.python, "-c", "x = bytearray(1024 * 1024 * 1024)"], workspace)
    assert result.exit_code not in (0, None)
    assert result.limit_hit == "memory"


@pytest.mark.parametrize("backend", BACKENDS)
async def test_file_size_limit_is_reported(workspace: Path, backend: str) -> None:
    sandbox = make_backend(backend, file_size_mb=1)
    code = "open('big.bin', 'wb').write(b'0' * (4 * 1024 * 1024))"
    result = await sandbox.run([sandbox.python, "-c", code], workspace)
    assert result.exit_code not in (0, None)
    assert result.limit_hit == "file_size"
    assert (workspace / "big.bin").stat().st_size <= 1024 * 1024


@pytest.mark.parametrize("backend", BACKENDS)
async def test_cancel_kills_every_process(workspace: Path, backend: str, token: str) -> None:
    sandbox = make_backend(backend)
    code = (
        "import subprocess, sys, time\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', sys.argv[1]])\n"
        "print('started', flush=True)\ntime.sleep(60)\n"
    )
    task = asyncio.create_task(sandbox.run([sandbox.python, "-c", code, token], workspace, timeout_s=60))
    deadline = time.monotonic() + 20
    while len(processes_with(token)) < 2 and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert len(processes_with(token)) >= 2, "the payload and its child should be running"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert await _wait_gone(token) == []


@pytest.mark.parametrize("backend", BACKENDS)
async def test_escaped_children_do_not_outlive_the_run(workspace: Path, backend: str, token: str) -> None:
    sandbox = make_backend(backend)
    code = (
        "import os, subprocess, sys\n"
        "subprocess.Popen([sys.executable, '-c', 'import time; time.sleep(60)', sys.argv[1]],"
        " start_new_session=True)\n"  # the daemon keeps our stdout open
        "print('left a daemon', flush=True)\n"
    )
    result = await sandbox.run([sandbox.python, "-c", code, token], workspace, timeout_s=30)
    assert not result.timed_out  # the run ends when its main process does, not when the daemon's pipe closes
    assert result.exit_code == 0 and "left a daemon" in result.stdout
    assert await _wait_gone(token) == []


SHOW_LIMITS = """
import json, os, resource
names = ["CPU", "FSIZE", "NPROC", "CORE", "AS"]
print(json.dumps({"uid": os.getuid(), "gid": os.getgid(), "groups": os.getgroups(),
                  **{n: list(resource.getrlimit(getattr(resource, "RLIMIT_" + n))) for n in names}}))
"""


@pytest.mark.parametrize("backend", BACKENDS)
async def test_the_payload_runs_with_its_limits_and_uid(workspace: Path, backend: str) -> None:
    sandbox = make_backend(backend, pids=40, memory_mb=300, file_size_mb=2)
    result = await sandbox.run([sandbox.python, "-c", SHOW_LIMITS], workspace, timeout_s=7)
    assert result.exit_code == 0, result.stderr
    seen = json.loads(result.stdout.strip().splitlines()[-1])
    mib = 1024 * 1024
    assert {n: seen[n] for n in ("CPU", "FSIZE", "NPROC", "CORE", "AS")} == {
        "CPU": [12, 12],
        "FSIZE": [2 * mib] * 2,
        "NPROC": [40, 40],
        "CORE": [0, 0],
        "AS": [300 * mib] * 2,
    }
    if os.geteuid() == 0:  # root: the run drops to a uid of its own from the range, with no extra groups
        assert UID_BASE <= seen["uid"] < UID_BASE + UID_COUNT
        assert (seen["gid"], seen["groups"]) == (seen["uid"], [])
    second = json.loads((await sandbox.run([sandbox.python, "-c", SHOW_LIMITS], workspace)).stdout.splitlines()[-1])
    assert second["NPROC"] == [40, 40]


def test_a_limit_above_the_inherited_hard_one_is_clamped_to_it(workspace: Path) -> None:
    """An agentls started under a hard process limit of 30 still runs its tests, limited to 30, not refused."""
    code = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from agent_core.sandbox.process import ProcessSandbox\n"
        "from agent_core.settings import SandboxSettings\n"
        "box = ProcessSandbox(SandboxSettings(pids=256, timeout_s=20))\n"
        "show = 'import resource; print(resource.getrlimit(resource.RLIMIT_NPROC))'\n"
        "result = asyncio.run(box.run([box.python, '-c', show], Path(sys.argv[1])))\n"
        "print(result.exit_code, result.stdout.strip(), result.stderr.strip()[-300:])\n"
    )
    done = subprocess.run(
        ["prlimit", "--nproc=30:30", "--", sys.executable, "-c", code, str(workspace)],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0].startswith("0 (30, 30)"), done.stdout
