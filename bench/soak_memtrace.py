"""The language server with tracemalloc on, for finding what a soak run's memory growth is made of.

    python -m bench.soak_memtrace DIR [START [EVERY]] [-- server arguments]

Serves like `python -m lsp_server`; START seconds in (default 120: after the
warm-up, when the first runs have imported the graph libraries) it starts
tracemalloc, and from then on, every EVERY seconds (default 60), writes into
DIR a tracemalloc snapshot (`snap-NNNN.pickle`) and the live objects counted
by type (`types-NNNN.json`). Only what was allocated after START is traced,
so a later snapshot holds what the server keeps: a leak shows as sites that
grow from snapshot to snapshot. `bench/soak.py --trace-memory DIR` starts the
server this way; `python -m bench.soak_memtrace --compare DIR` prints what
grew between the first snapshot and the last: the allocation sites by size
and the object types by count. Debug only: tracemalloc slows the server.
"""

from __future__ import annotations

import gc
import json
import sys
import threading
import time
import tracemalloc
from collections import Counter
from pathlib import Path

FRAMES = 12


def count_types() -> dict[str, int]:
    """Live gc-tracked objects by qualified type name."""
    counts: Counter[str] = Counter()
    for obj in gc.get_objects():
        kind = type(obj)
        counts[f"{kind.__module__}.{kind.__qualname__}"] += 1
    return dict(counts)


def dump_forever(out: Path, start: float, every: float) -> None:
    time.sleep(start)
    tracemalloc.start(FRAMES)
    index = 0
    while True:
        time.sleep(every)
        gc.collect()
        tracemalloc.take_snapshot().dump(str(out / f"snap-{index:04d}.pickle"))
        (out / f"types-{index:04d}.json").write_text(json.dumps(count_types()))
        index += 1


def compare(out: Path, top: int = 25) -> None:
    """Print the allocation sites and object types that grew from the second snapshot to the last."""
    snaps = sorted(out.glob("snap-*.pickle"))
    types = sorted(out.glob("types-*.json"))
    if len(snaps) < 2:
        sys.exit(f"need two snapshots in {out}, found {len(snaps)}")
    first, last = snaps[0], snaps[-1]
    print(f"# {first.name} -> {last.name}")
    for path in snaps:
        total = sum(stat.size for stat in tracemalloc.Snapshot.load(str(path)).statistics("filename"))
        print(f"#   {path.name}: {total / 2**20:.1f} MiB traced")
    no_imports = [tracemalloc.Filter(False, "<frozen importlib*", all_frames=True)]  # modules loading late
    old, new = (tracemalloc.Snapshot.load(str(path)).filter_traces(no_imports) for path in (first, last))
    for stat in new.compare_to(old, "traceback")[:top]:
        print(f"\n{stat.size_diff / 1024:+.1f} KiB ({stat.count_diff:+d} blocks), now {stat.size / 1024:.1f} KiB")
        for line in stat.traceback.format(limit=FRAMES, most_recent_first=True)[: 2 * FRAMES]:
            print("   ", line)
    before = json.loads(types[0].read_text())
    after = json.loads(types[-1].read_text())
    grown = sorted(((after[k] - before.get(k, 0), k) for k in after), reverse=True)[:top]
    print("\n# object types by growth in count")
    for diff, name in grown:
        print(f"{diff:+8d}  {after[name]:8d}  {name}")


def main() -> None:
    if sys.argv[1:2] == ["--compare"]:
        compare(Path(sys.argv[2]))
        return
    out = Path(sys.argv[1])
    out.mkdir(parents=True, exist_ok=True)
    rest = sys.argv[2:]
    start = float(rest.pop(0)) if rest and rest[0] != "--" else 120.0
    every = float(rest.pop(0)) if rest and rest[0] != "--" else 60.0
    server_args = rest[1:] if rest[:1] == ["--"] else rest
    threading.Thread(target=dump_forever, args=(out, start, every), name="memtrace", daemon=True).start()
    from lsp_server.server import main as serve

    sys.exit(serve(server_args))


if __name__ == "__main__":
    main()
