"""Memory search latency with many stored failures.

Fills a fresh SQLite memory with N synthetic failures (varied error types,
test names and messages), then times `similar_failures` over R queries.
The first query loads the vectors; it is reported apart from the rest.

    python -m bench.memory_search [--failures 10000] [--queries 200]
"""

from __future__ import annotations

import argparse
import random
import statistics
import tempfile
import time
from pathlib import Path

from agent_core.memory.sqlite_store import SQLiteMemory

KINDS = [
    ("AssertionError", "assert {a} == {b}"),
    ("TypeError", "{f}() takes {a} positional arguments but {b} were given"),
    ("AttributeError", "'NoneType' object has no attribute '{f}'"),
    ("ModuleNotFoundError", "No module named '{f}'"),
    ("NameError", "name '{f}' is not defined"),
    ("IndexError", "list index out of range in {f}"),
]
WORDS = "parse total paginate render load save merge split index user order invoice cart slug".split()


def synthetic(rng: random.Random) -> tuple[str, str, str]:
    kind, template = rng.choice(KINDS)
    f = rng.choice(WORDS) + "_" + rng.choice(WORDS)
    message = template.format(a=rng.randint(0, 99), b=rng.randint(0, 99), f=f)
    signature = f"{kind}|tests/test_{rng.choice(WORDS)}.py::test_{f}|{template.split('{')[0]}"
    return signature, kind, message


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--failures", type=int, default=10_000)
    parser.add_argument("--queries", type=int, default=200)
    args = parser.parse_args()
    rng = random.Random(7)
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        store = SQLiteMemory(Path(tmp) / "memory.sqlite", threshold=0.7)
        started = time.perf_counter()
        for _ in range(args.failures):
            store.record_failure(*synthetic(rng))
        fill_s = time.perf_counter() - started
        queries = [synthetic(rng) for _ in range(args.queries)]
        t0 = time.perf_counter()
        store.similar_failures(queries[0][0], queries[0][2])
        first_ms = (time.perf_counter() - t0) * 1000
        samples = []
        for signature, _, message in queries[1:]:
            t0 = time.perf_counter()
            store.similar_failures(signature, message)
            samples.append((time.perf_counter() - t0) * 1000)
        samples.sort()
        p99 = samples[min(len(samples) - 1, int(len(samples) * 0.99))]
        size_mb = (Path(tmp) / "memory.sqlite").stat().st_size / 2**20
        print(f"stored failures     : {args.failures} (filled in {fill_s:.1f} s, {size_mb:.1f} MiB)")
        print(f"first query (load)  : {first_ms:.1f} ms")
        print(f"similar_failures    : median {statistics.median(samples):.2f} ms, p99 {p99:.2f} ms "
              f"over {len(samples)} queries")


if __name__ == "__main__":
    main()
