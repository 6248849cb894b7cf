"""Pipeline overhead and sandbox cost, printed side by side (not a test).

1. Overhead per iteration: `Engine.run` on a small buggy project with the
   scripted model answering instantly and the coder never fixing the bug, so
   every run does `max_iterations` rounds. From the run's journal, an
   iteration's overhead is the time from the end of one test run to the start
   of the next (plan or reflect, code, gate, routing, LLM HTTP round trips,
   file tools, journal, checkpoint). Headline: the marginal cost of an
   iteration, i.e. (non-test time of an N-iteration run - that of a
   1-iteration run) / (N - 1), in wall time and in this process's CPU time
   (the CPU figure does not grow when other processes load the machine).
   Medians over several runs.
2. Sandbox ratio: the same pytest command run through the sandbox and bare
   (same interpreter, same options, same copy of the project), interleaved,
   median of each.

Usage: .venv/bin/python -m bench.pipeline_overhead [--runs 5] [--iterations 3]
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from pathlib import Path

from agent_core.engine import Engine
from agent_core.events import NullHooks
from agent_core.models import RunRequest
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import load_settings
from agent_core.testing import runner
from testkit.scripted_llm import ScriptedLLM

PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
WRONG = {"edits": [{"path": "calc.py", "search": "a - b", "replace": "a - b  # unchanged"}], "explanation": "x"}


def make_project(root: Path) -> Path:
    root.mkdir(parents=True, exist_ok=True)
    for rel, text in PROJECT.items():
        (root / rel).write_text(text)
    return root


def loop_gaps_ms(project: Path, run_id: str) -> list[float]:
    """Per iteration: ms from the end of the previous test run to the start of the next one."""
    path = project / ".agentls" / "runs" / run_id / "journal.jsonl"
    records = [json.loads(line) for line in path.read_text().splitlines()]
    gaps, ended = [], None
    for r in records:
        if r["type"] == "node_exit" and r.get("node") in ("baseline", "test"):
            ended = r["ts"]
        elif r["type"] == "node_enter" and r.get("node") == "test" and ended is not None:
            gaps.append((r["ts"] - ended) * 1000)
    return gaps


async def overhead_once(project: Path, llm: ScriptedLLM, iterations: int) -> tuple[float, list[float], float]:
    """(non-test wall ms, per-iteration loop ms, non-test CPU ms of this process) for one run."""
    in_tests = cpu_in_tests = 0.0
    real_run_tests = runner.run_tests

    async def timed_run_tests(*args, **kwargs):
        nonlocal in_tests, cpu_in_tests
        started, cpu_started = time.perf_counter(), time.process_time()
        try:
            return await real_run_tests(*args, **kwargs)
        finally:
            in_tests += time.perf_counter() - started
            cpu_in_tests += time.process_time() - cpu_started

    runner.run_tests = timed_run_tests  # pipeline/run.py looks it up at each run
    try:
        settings = load_settings(project, {"base_url": llm.base_url, "max_iterations": iterations,
                                           "max_revisions": 0, "memory": {"enabled": False}})
        started, cpu_started = time.perf_counter(), time.process_time()
        result = await Engine(settings).run(RunRequest(kind="fix", workspace=project), NullHooks())
        total, cpu = time.perf_counter() - started, time.process_time() - cpu_started
    finally:
        runner.run_tests = real_run_tests
    assert result.status == "unfixed", result
    assert result.iterations == iterations
    return (total - in_tests) * 1000, loop_gaps_ms(project, result.run_id), (cpu - cpu_in_tests) * 1000


async def sandbox_ratio(project: Path, runs: int) -> tuple[float, float]:
    """(median sandboxed s, median bare s) of the same pytest run."""
    settings = load_settings(project)
    sandbox = make_sandbox(settings, lambda text: print(f"note: {text}"))
    argv = [sandbox.python, "-m", "pytest", "-q", "-p", "no:cacheprovider"]
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin")}
    if getattr(sandbox, "runtime", None) and sandbox.runtime.pythonpath():
        env["PYTHONPATH"] = sandbox.runtime.pythonpath()
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        work = make_project(Path(tmp) / "proj")
        os.chmod(tmp, 0o755)
        boxed, bare = [], []
        for _ in range(runs):
            started = time.perf_counter()
            await sandbox.run(argv, work, timeout_s=120)
            boxed.append(time.perf_counter() - started)
            started = time.perf_counter()
            subprocess.run(argv, cwd=work, env=env, capture_output=True, check=False)
            bare.append(time.perf_counter() - started)
    return statistics.median(boxed), statistics.median(bare)


async def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--iterations", type=int, default=3)
    args = parser.parse_args()
    llm = ScriptedLLM().start()
    llm.default("coder", WRONG)
    llm.default("reflector", {"hypothesis": "h", "file": "calc.py", "change": "c", "confidence": "low"})
    tmp = Path(tempfile.mkdtemp(prefix="agentls-bench-"))
    try:
        per_iteration, loops, cpu = [], [], []
        for n in range(args.runs + 1):  # the first pair warms imports and is not counted
            # marginal cost of an iteration: a run of N iterations minus a run of 1, over N - 1
            ms_n, gaps, cpu_n = await overhead_once(make_project(tmp / f"n{n}"), llm, args.iterations)
            ms_1, _, cpu_1 = await overhead_once(make_project(tmp / f"o{n}"), llm, 1)
            if n:
                per_iteration.append((ms_n - ms_1) / (args.iterations - 1))
                loops.extend(gaps)
                cpu.append((cpu_n - cpu_1) / (args.iterations - 1))
        boxed, bare = await sandbox_ratio(tmp / "ratio", args.runs)
    finally:
        llm.stop()
        shutil.rmtree(tmp, ignore_errors=True)
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
    print(f"pipeline overhead per iteration (test run excluded; target < 50 ms), median of {args.runs}:")
    print(f"  marginal wall time ({args.iterations}-iteration run minus 1-iteration run, per extra iteration): "
          f"{statistics.median(per_iteration):.1f} ms")
    print(f"  marginal CPU time of this process (incl. the scripted server's threads): "
          f"{statistics.median(cpu):.1f} ms  (insensitive to other processes' load)")
    print(f"  journal: end of one test run to start of the next: {statistics.median(loops):.1f} ms "
          f"(min {min(loops):.1f}, max {max(loops):.1f}, {len(loops)} iterations)")
    print(f"pytest sandboxed {boxed * 1000:.0f} ms vs bare {bare * 1000:.0f} ms: ratio {boxed / bare:.2f} "
          f"(median of {args.runs}, interleaved; target < 1.15)")


if __name__ == "__main__":
    asyncio.run(main())
