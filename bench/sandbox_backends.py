"""Sandbox backends side by side: start-to-exit cost against a bare run, and the containment score.

    DOCKER_HOST=unix:///tmp/dockerd.agentls/docker.sock .venv/bin/python -m bench.sandbox_backends [--repeat 5]

For every backend that can run here (docker when an engine answers and has the
image, bubblewrap, process) it prints the median wall time of
  - a no-op run (`python -c pass`), and
  - a 50-test pytest run through the real test runner,
each next to the same command run bare on the host (same interpreter and
PYTHONPATH where the backend's interpreter exists on the host) and their
ratio; then the containment score: payloads of tests/sandbox_containment
contained / payloads tried (the process backend never tries the payloads that
would send packets off this machine). Limits as in the containment suite.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import sys
import time
from pathlib import Path

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.sandbox.factory import describe_backend_choice, make_sandbox
from agent_core.sandbox.runtime import resolve_runtime
from agent_core.settings import SandboxSettings
from agent_core.testing.runner import pytest_options, run_tests
from testkit.containment_payloads import PAYLOADS, agentls_containers, run_payload

LIMITS = {"timeout_s": 4.0, "memory_mb": 256, "pids": 64, "file_size_mb": 64, "cpus": 1.0}
NEVER_RUN_WITHOUT_ISOLATION = {"connect-public", "dns-lookup"}
FIFTY_TESTS = "".join(f"def test_{i}():\n    assert {i} + 1 == {i + 1}\n\n" for i in range(50))


def bare_command(sandbox) -> tuple[str, dict[str, str]]:
    """The interpreter and environment of the bare baseline: the backend's own runtime, or for docker
    (whose interpreter lives in the image) the host's equivalent: system Python with the same test packages."""
    runtime = getattr(sandbox, "runtime", None) or resolve_runtime(None)
    env = {"PATH": "/usr/bin:/bin", "HOME": "/tmp", "LANG": "C.UTF-8", "PYTHONDONTWRITEBYTECODE": "1"}
    if runtime.pythonpath():
        env["PYTHONPATH"] = runtime.pythonpath()
    return runtime.python, env


async def bare_run(argv: list[str], cwd: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    proc = await asyncio.create_subprocess_exec(*argv, cwd=cwd, env=env, stdout=asyncio.subprocess.DEVNULL,
                                                stderr=asyncio.subprocess.DEVNULL)
    await proc.wait()
    return time.perf_counter() - started


async def timed(coro) -> float:
    started = time.perf_counter()
    await coro
    return time.perf_counter() - started


async def speed(sandbox, repeat: int) -> dict[str, tuple[float, float]]:
    """{case: (median sandboxed s, median bare s)}"""
    python, env = bare_command(sandbox)
    ws = make_temp_dir("bench")
    try:
        (ws / "test_fifty.py").write_text(FIFTY_TESTS)
        noop_sb, noop_bare, fifty_sb, fifty_bare = [], [], [], []
        for _ in range(repeat):
            noop_sb.append(await timed(sandbox.run([sandbox.python, "-c", "pass"], ws)))
            noop_bare.append(await bare_run([python, "-c", "pass"], ws, env))
            report = None

            async def fifty():
                nonlocal report
                report = await run_tests(sandbox, ws, "pytest")

            fifty_sb.append(await timed(fifty()))
            assert report is not None and report.passed == 50, report
            argv = [python, "-m", "pytest", *pytest_options(".agentls/bare.xml")]
            fifty_bare.append(await bare_run(argv, ws, env))
        med = statistics.median
        return {"no-op run": (med(noop_sb), med(noop_bare)), "50-test pytest": (med(fifty_sb), med(fifty_bare))}
    finally:
        remove_temp_dir(ws)


async def containment(sandbox) -> tuple[int, int, list[str]]:
    contained, tried, escaped = 0, 0, []
    for payload in PAYLOADS:
        if not sandbox.isolated and payload.name in NEVER_RUN_WITHOUT_ISOLATION:
            continue
        root = make_temp_dir("containment")
        os.chmod(root, 0o777)
        (root / "ws").mkdir()
        (root / "outside").mkdir(mode=0o777)
        os.chmod(root / "outside", 0o777)
        try:
            outcome = await run_payload(sandbox, root, payload, agentls_containers)
        finally:
            remove_temp_dir(root)
        tried += 1
        contained += outcome.contained
        if not outcome.contained:
            escaped.append(payload.name)
    return contained, tried, escaped


def available_backends(names: list[str]) -> list[tuple[str, object]]:
    out = []
    for name in names:
        settings = SandboxSettings(backend=name, **LIMITS)
        chosen, reason = describe_backend_choice(settings)
        try:
            out.append((name, make_sandbox(settings)))
        except Exception as exc:  # noqa: BLE001 - an unavailable backend is reported and left out
            print(f"{name}: unavailable ({reason}; {exc})")
    return out


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=5, help="runs per median (default 5)")
    parser.add_argument("--backends", nargs="*", default=["docker", "bubblewrap", "process"])
    parser.add_argument("--no-containment", action="store_true", help="skip the containment score")
    args = parser.parse_args()
    sys.stdout.reconfigure(line_buffering=True)
    backends = available_backends(args.backends)
    print(f"{'backend':<11} {'case':<15} {'sandboxed':>10} {'bare':>8} {'ratio':>7}")
    for name, sandbox in backends:
        for case, (sb, bare) in (await speed(sandbox, args.repeat)).items():
            print(f"{name:<11} {case:<15} {sb:>9.3f}s {bare:>7.3f}s {sb / bare:>6.1f}x")
    if args.no_containment:
        return
    print(f"\n{'backend':<11} containment (contained / tried)")
    for name, sandbox in backends:
        contained, tried, escaped = await containment(sandbox)
        note = f"  got through: {', '.join(escaped)}" if escaped else ""
        print(f"{name:<11} {contained}/{tried}{note}")


if __name__ == "__main__":
    asyncio.run(main())
