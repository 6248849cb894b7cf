"""`make demo`'s example, N times in a row: fixed and verified each time, and how long each run took.

    AGENTLS_BASE_URL=http://127.0.0.1:8631/v1 .venv/bin/python -m bench.demo_runs [--runs 10] [--example digits]

Each run is `scripts/demo.sh EXAMPLE` (a fresh copy of examples/EXAMPLE, `agentls fix --json --apply`,
the tests run again afterwards) against the endpoint in AGENTLS_BASE_URL, i.e. with the model already
served (without it each run would also fetch-check and start the bundled model). A run counts as fixed
when the script exits 0 and its JSON line says `fixed`. Prints each run, then fixed/N and the median,
slowest and fastest wall time.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _status(stdout: str) -> str:
    for line in reversed(stdout.splitlines()):
        if line.startswith("{") and '"status"' in line:
            try:
                return str(json.loads(line).get("status"))
            except ValueError:
                continue
    return "no JSON line"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--runs", type=int, default=10)
    parser.add_argument("--example", default="digits")
    args = parser.parse_args(argv)
    if not (os.environ.get("AGENTLS_BASE_URL") or os.environ.get("OPENAI_BASE_URL")):
        print("set AGENTLS_BASE_URL to the served model (see the docstring)", file=sys.stderr)
        return 2
    walls, fixed = [], 0
    for n in range(1, args.runs + 1):
        started = time.perf_counter()
        done = subprocess.run([str(ROOT / "scripts" / "demo.sh"), args.example], capture_output=True, text=True,
                              check=False)
        wall = time.perf_counter() - started
        status = _status(done.stdout)
        ok = done.returncode == 0 and status == "fixed"
        fixed += ok
        walls.append(wall)
        print(f"run {n:>2}: exit {done.returncode} status {status:<10} {wall:6.1f} s", flush=True)
    print(f"fixed and verified: {fixed}/{args.runs}; wall median {statistics.median(walls):.1f} s, "
          f"slowest {max(walls):.1f} s, fastest {min(walls):.1f} s")
    return 0 if fixed == args.runs else 1


if __name__ == "__main__":
    sys.exit(main())
