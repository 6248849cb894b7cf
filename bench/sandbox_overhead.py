"""Sandbox overhead: start-to-exit of a no-op and of a 50-test pytest run, per backend vs bare.

Usage: python -m bench.sandbox_overhead [--runs N]

"Bare" runs the same interpreter with the same PYTHONPATH, cwd and arguments
as a plain child process (no namespaces, no uid switch, no rlimits). Each
figure is the median of N runs; the ratio is sandboxed / bare.
"""

from __future__ import annotations

import argparse
import asyncio
import statistics
import time
from collections.abc import Awaitable, Callable
from pathlib import Path

from agent_core.sandbox.base import sandbox_env
from agent_core.sandbox.bubblewrap import BubblewrapSandbox, probe_bwrap
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.sandbox.factory import docker_status, make_sandbox
from agent_core.sandbox.process import ProcessSandbox
from agent_core.settings import SandboxSettings
from agent_core.testing.runner import pytest_options, run_tests

SUITE = "import pytest\n\n\n@pytest.mark.parametrize('n', range(50))\ndef test_square(n):\n    assert n * n >= 0\n"


def backends() -> list:
    found = []
    if docker_status(SandboxSettings())[0]:
        found.append(make_sandbox(SandboxSettings(backend="docker")))
    if probe_bwrap()[0]:
        found.append(BubblewrapSandbox(SandboxSettings()))
    found.append(ProcessSandbox(SandboxSettings()))
    return found


async def bare(argv: list[str], workspace: Path, pythonpath: str | None) -> None:
    proc = await asyncio.create_subprocess_exec(
        *argv, cwd=str(workspace), env=sandbox_env(None, pythonpath=pythonpath),
        stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL,
    )
    await proc.wait()


async def median_s(make: Callable[[], Awaitable[object]], runs: int) -> float:
    await make()  # warm-up (site cache, image, page cache)
    times = []
    for _ in range(runs):
        started = time.perf_counter()
        await make()
        times.append(time.perf_counter() - started)
    return statistics.median(times)


async def measure(sandbox, workspace: Path, runs: int) -> tuple[float, float, float, float]:
    runtime = getattr(sandbox, "runtime", None) or BubblewrapSandbox(SandboxSettings()).runtime
    python, pythonpath = runtime.python, runtime.pythonpath()
    noop_sb = await median_s(lambda: sandbox.run([sandbox.python, "-c", "pass"], workspace), runs)
    noop_bare = await median_s(lambda: bare([python, "-c", "pass"], workspace, pythonpath), runs)
    suite_sb = await median_s(lambda: run_tests(sandbox, workspace, "pytest"), max(3, runs // 2))
    junit = ".agentls/junit-bare.xml"
    suite_bare = await median_s(
        lambda: bare([python, "-m", "pytest", *pytest_options(junit)], workspace, pythonpath), max(3, runs // 2)
    )
    return noop_sb, noop_bare, suite_sb, suite_bare


async def main(runs: int) -> None:
    print(
        f"{'backend':<11} {'no-op ms':>9} {'bare ms':>8} {'ratio':>6}   {'50 tests ms':>11} {'bare ms':>8} {'ratio':>6}"
    )
    for sandbox in backends():
        base = make_temp_dir("bench")
        try:
            workspace = base / "ws"
            (workspace / ".agentls").mkdir(parents=True)
            (workspace / "test_bench.py").write_text(SUITE)
            a, b, c, d = await measure(sandbox, workspace, runs)
        finally:
            remove_temp_dir(base)
        print(
            f"{sandbox.name:<11} {a * 1e3:9.1f} {b * 1e3:8.1f} {a / b:6.2f}   "
            f"{c * 1e3:11.1f} {d * 1e3:8.1f} {c / d:6.2f}"
        )


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=9, help="Timed runs per figure (median reported).")
    asyncio.run(main(parser.parse_args().runs))
