"""Which passing tests cover a mutant's line: the scan of every test's lines per mutant, against the index.

Builds a synthetic per-test coverage shaped like a big suite (T tests, each
running a few hundred lines of F files; a tenth failing), then asks, for M
mutants on random covered lines, which passing tests run that line: once by
scanning every test's line list (what `Localization.covering` did before),
once through `Localization.covering` (an index built on the first call).
The scan is timed on a sample of the mutants and scaled to M; the index on
all M, R times, the median shown (the first call includes the index build).

    python -m bench.covering_index [--tests 1238] [--mutants 1000] [--repeats 5]
"""

from __future__ import annotations

import argparse
import random
import statistics
import time

from agent_core.search import Localization


def synthetic(tests: int, files: int, seed: int = 1) -> tuple[dict, dict[str, str]]:
    rng = random.Random(seed)
    ids = [f"tests/test_mod{i % 40}.py::test_{i}" for i in range(tests)]
    outcomes = {t: ("failed" if rng.random() < 0.1 else "passed") for t in ids}
    coverage = {f"pkg/mod{k}.py": {t: sorted(rng.sample(range(1, 1500), 250)) for t in ids} for k in range(files)}
    return coverage, outcomes


def scan(where: Localization, path: str, line: int) -> list[str]:
    return [t for t, lines in (where.files.get(path) or {}).items()
            if where.outcomes.get(t) == "passed" and line in lines and t not in where.failing]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tests", type=int, default=1238)
    parser.add_argument("--files", type=int, default=3)
    parser.add_argument("--mutants", type=int, default=1000)
    parser.add_argument("--sample", type=int, default=20, help="mutants the scan is timed on")
    parser.add_argument("--repeats", type=int, default=5)
    args = parser.parse_args()
    files, outcomes = synthetic(args.tests, args.files)
    failing = [t for t, o in outcomes.items() if o == "failed"]
    rng = random.Random(2)
    lines = [(rng.choice(sorted(files)), rng.randrange(1, 1500)) for _ in range(args.mutants)]

    plain = Localization([], "coverage", failing, files, outcomes)
    started = time.perf_counter()
    for path, line in lines[: args.sample]:
        scan(plain, path, line)
    per_mutant = (time.perf_counter() - started) / args.sample

    runs = []
    for _ in range(args.repeats):
        where = Localization([], "coverage", failing, files, outcomes)  # a fresh index each time
        started = time.perf_counter()
        for path, line in lines:
            where.covering(path, line)
        runs.append(time.perf_counter() - started)
    assert all(where.covering(p, n) == scan(where, p, n) for p, n in lines[: args.sample]), "the two disagree"

    print(f"{args.tests} tests x {args.files} files, {args.mutants} mutants")
    print(f"scan per mutant:  {per_mutant * 1000:.1f} ms -> {per_mutant * args.mutants:.1f} s for {args.mutants}")
    print(f"index, all {args.mutants} (build included): median {statistics.median(runs):.3f} s "
          f"over {args.repeats} runs (min {min(runs):.3f}, max {max(runs):.3f})")


if __name__ == "__main__":
    main()
