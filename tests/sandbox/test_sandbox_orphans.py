"""No process of a sandboxed run outlives its owner: a cancel at any moment, even while the sandbox is
still starting, kills all of it; and what a killed owner left is killed by the next start's sweep.

Real backends and real processes, found in /proc by a token in their argv. A cancel that lands while
asyncio is still connecting the new process's pipes used to kill only bwrap's own pid: its cloned
child then waited for ever for a go-ahead, as pid 1 of its pid namespace (deaf to SIGTERM),
re-parented to init, and the cancelled call itself never returned.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from sandbox_support import make_backend, processes_with

from agent_core.cli.interrupt import sweep_dead_owners

pytestmark = pytest.mark.timeout(180)

# How long the test lets the run go before cancelling it: one or more turns of the event loop (the
# first suspension of a run is inside asyncio's start of the process), then a few milliseconds.
DELAYS = [("turns", 1), ("turns", 2), ("turns", 3), ("ms", 1), ("ms", 5), ("ms", 20), ("ms", 200)]

# The owner: runs PAYLOAD (from its environment, so that its own argv holds no token) in a sandbox.
OWNER = """
import asyncio, os, sys
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from sandbox_support import make_backend
sandbox = make_backend(sys.argv[1], timeout_s=120)
asyncio.run(sandbox.run([sandbox.python, "-c", os.environ["PAYLOAD"]], Path(sys.argv[2])))
"""
# The owner again, but the run goes on in a thread while the main thread exits normally when told (stdin).
OWNER_EXITING = """
import asyncio, os, sys, threading
from pathlib import Path
sys.path.insert(0, sys.argv[3])
from sandbox_support import make_backend
sandbox = make_backend(sys.argv[1], timeout_s=120)
run = sandbox.run([sandbox.python, "-c", os.environ["PAYLOAD"]], Path(sys.argv[2]))
threading.Thread(target=asyncio.run, args=(run,), daemon=True).start()
sys.stdin.readline()
sys.exit(0)
"""
# Leaves the run's process group (a daemon: fork, setsid, fork) and sleeps; its parent sleeps too.
DAEMON = """
import os, time
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        time.sleep(120)  # {token}
    os._exit(0)
time.sleep(120)
"""


@pytest.fixture(autouse=True)
def _reap(token: str) -> Iterator[None]:
    """Whatever a failing test left (its processes carry the token), killed: never left running."""
    yield
    for pid in processes_with(token):
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


def _gone(token: str, within_s: float = 3.0) -> list[int]:
    """The processes still carrying `token` after waiting up to `within_s` for them to go."""
    deadline = time.monotonic() + within_s
    while (left := processes_with(token)) and time.monotonic() < deadline:
        time.sleep(0.05)
    return left


async def _wait(delay: tuple[str, int]) -> None:
    kind, amount = delay
    if kind == "turns":
        for _ in range(amount):
            await asyncio.sleep(0)
    else:
        await asyncio.sleep(amount / 1000)


@pytest.mark.parametrize("backend", ["bubblewrap", "process"])
async def test_a_cancel_at_any_moment_of_the_start_returns_and_leaves_no_process(
    workspace: Path, token: str, backend: str,
) -> None:
    sandbox = make_backend(backend, timeout_s=120)
    for delay in DELAYS:
        marked = f"{token}-{delay[0]}{delay[1]}"
        run = asyncio.create_task(sandbox.run([sandbox.python, "-c", f"import time; time.sleep(120)  # {marked}"],
                                              workspace))
        await _wait(delay)
        run.cancel()
        try:
            await asyncio.wait_for(asyncio.shield(run), 15)
        except asyncio.CancelledError:
            pass
        except TimeoutError:
            pytest.fail(f"the run cancelled after {delay} did not return within 15 s")
        assert run.cancelled(), f"cancelled after {delay}: {run}"
        assert _gone(marked) == [], f"cancelled after {delay}: processes of the run are left"


@pytest.mark.parametrize("backend", ["bubblewrap", "process"])
async def test_a_timeout_at_any_moment_of_the_start_leaves_no_process(
    workspace: Path, token: str, backend: str,
) -> None:
    sandbox = make_backend(backend, timeout_s=120)
    for timeout_s in (0.001, 0.003, 0.006, 0.01, 0.02, 0.05, 0.2):
        marked = f"{token}-{timeout_s}"
        result = await asyncio.wait_for(
            sandbox.run([sandbox.python, "-c", f"import time; time.sleep(120)  # {marked}"], workspace,
                        timeout_s=timeout_s), 30)
        assert result.timed_out, f"{timeout_s} s: {result}"
        assert _gone(marked) == [], f"timed out after {timeout_s} s: processes of the run are left"


def _start_owner(backend: str, workspace: Path, payload: str, owner: str = OWNER) -> subprocess.Popen:
    support = str(Path(__file__).parent)
    return subprocess.Popen([sys.executable, "-c", owner, backend, str(workspace), support], stdin=subprocess.PIPE,
                            env={**os.environ, "PAYLOAD": payload},
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _until(condition: Callable[[], bool], timeout_s: float = 30.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not condition():
        if time.monotonic() > deadline:
            pytest.fail("timed out waiting for the run's processes")
        time.sleep(0.002)


def test_the_sweep_kills_what_a_killed_owner_left(workspace: Path, token: str) -> None:
    owner = _start_owner("process", workspace, DAEMON.format(token=token))
    try:
        _until(lambda: len(processes_with(token)) >= 2)  # the payload and its daemon
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(10)
        # The owner's death alone stops nothing here (no namespace, no parent-death signal); any agentls
        # starting on this machine now would sweep them, as this does:
        sweep_dead_owners()  # what the next agentls command (or the server) does at start
        assert _gone(token) == []
    finally:
        owner.kill()


@pytest.mark.parametrize("moment", ["as soon as bwrap appears", "once the payload runs"])
def test_a_killed_owner_leaves_no_sandbox_after_the_sweep(workspace: Path, token: str, moment: str) -> None:
    payload = f"import time; time.sleep(120)  # {token}"
    owner = _start_owner("bubblewrap", workspace, payload)
    try:
        if moment == "once the payload runs":  # bwrap's two processes, and the payload inside
            _until(lambda: len(processes_with(token)) >= 3)
        else:
            _until(lambda: bool(processes_with(token)))
        os.kill(owner.pid, signal.SIGKILL)
        owner.wait(10)
        sweep_dead_owners()
        assert _gone(token) == []
    finally:
        owner.kill()


def test_an_owner_that_exits_mid_run_takes_its_runs_with_it(workspace: Path, token: str) -> None:
    owner = _start_owner("process", workspace, DAEMON.format(token=token), OWNER_EXITING)
    try:
        _until(lambda: len(processes_with(token)) >= 2)  # the payload and its daemon
        owner.communicate(b"exit\n", timeout=30)
        assert owner.returncode == 0
        assert _gone(token) == [], "no sweep here: the owner's own exit killed them"
    finally:
        owner.kill()
