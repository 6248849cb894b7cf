"""Where a fix run's wall time goes, read from its journal (not a test; prints figures).

    .venv/bin/python -m bench.time_split PATH ... [--json]

Each PATH is a run directory (`.agentls/runs/<id>`), a workspace (its runs), or a
directory kept by `bench/fix_rate.py --keep` / `bench/real_fix_rate.py --keep`
(every task's runs). Per run, the wall time from its first journal record to
`run_end` is split into:

    start      before the baseline starts (settings, sandbox choice, shadow copy, graph)
    baseline   the baseline test run (the `baseline` node)
    localize   per-test coverage and ranking (the `search` node up to its `localize` record)
    search     the mutant search and the whole-suite runs that verify a mutant (the rest of `search`)
    model      every model call (`llm_call` records: request to last streamed token, retries included)
    tests      candidates' test runs: the `code`, `gate`, `test` and `verify` nodes minus the model calls
               made inside them (the coder's calls, the sampled candidates' test runs)
    other      the rest: plan, reflect and replan minus their model calls, routing, finalize, journal

and the figure the real-workspace issue asks for: the share of wall time spent
outside the model, over the runs that called it.
"""

from __future__ import annotations

import argparse
import json
import sys
from dataclasses import asdict, dataclass, field
from pathlib import Path

PARTS = ("start", "baseline", "localize", "search", "model", "tests", "other")
TEST_NODES = {"code", "gate", "test", "verify"}


@dataclass
class Split:
    run: str
    status: str
    total: float
    parts: dict[str, float] = field(default_factory=dict)
    llm_calls: int = 0


def _records(journal: Path) -> list[dict]:
    out = []
    for line in journal.read_text(encoding="utf-8").splitlines():
        try:
            out.append(json.loads(line))
        except ValueError:
            continue  # a line cut short by a killed run
    return out


def _node_spans(records: list[dict]) -> list[tuple[str, float, float]]:
    spans, open_at = [], {}
    for r in records:
        if r["type"] == "node_enter":
            open_at[r["node"]] = r["ts"]
        elif r["type"] == "node_exit" and r["node"] in open_at:
            spans.append((r["node"], open_at.pop(r["node"]), r["ts"]))
    return spans


def split(journal: Path) -> Split | None:
    """The split of one run's wall time, or None for a journal without a start and an end."""
    records = _records(journal)
    end = next((r for r in reversed(records) if r["type"] == "run_end"), None)
    if not records or end is None:
        return None
    first = records[0]["ts"]
    calls = [r for r in records if r["type"] == "llm_call"]
    parts = dict.fromkeys(PARTS, 0.0)
    parts["model"] = sum(float(c.get("duration_s") or 0) for c in calls)
    spans = _node_spans(records)
    enters = [s for s in spans if s[0] == "baseline"]
    parts["start"] = (enters[0][1] if enters else end["ts"]) - first
    localize_ts = next((r["ts"] for r in records if r["type"] == "localize"), None)
    for name, began, ended in spans:
        inside = sum(float(c.get("duration_s") or 0) for c in calls if began <= c["ts"] <= ended)
        if name == "baseline":
            parts["baseline"] += ended - began
        elif name == "search":
            cut = localize_ts if localize_ts is not None and began <= localize_ts <= ended else ended
            parts["localize"] += cut - began
            parts["search"] += ended - cut
        elif name in TEST_NODES:
            parts["tests"] += max(0.0, ended - began - inside)
    total = end["ts"] - first
    parts["other"] = max(0.0, total - sum(parts.values()))
    return Split(journal.parent.name, str(end.get("status")), total, parts, len(calls))


def journals(path: Path) -> list[Path]:
    if (path / "journal.jsonl").is_file():
        return [path / "journal.jsonl"]
    for pattern in (".agentls/runs/*/journal.jsonl", "work/*/.agentls/runs/*/journal.jsonl",
                    "*/.agentls/runs/*/journal.jsonl"):
        if found := sorted(path.glob(pattern)):
            return found
    return []


def _row(label: str, total: float, parts: dict[str, float], calls: int) -> str:
    cells = "".join(f"{parts[p]:>9.1f}" for p in PARTS)
    outside = 100 * (1 - parts["model"] / total) if total else 0.0
    return f"{label:<44}{total:>9.1f}{cells}{calls:>6}{outside:>8.0f}%"


def report(splits: list[Split]) -> None:
    print(f"{'run (seconds)':<44}{'total':>9}" + "".join(f"{p:>9}" for p in PARTS) + f"{'calls':>6}{'outside':>9}")
    for s in splits:
        print(_row(f"{s.run} {s.status}"[:43], s.total, s.parts, s.llm_calls))
    for label, chosen in (("all runs", splits), ("runs that called the model", [s for s in splits if s.llm_calls])):
        if chosen:
            sums = {p: sum(s.parts[p] for s in chosen) for p in PARTS}
            print(_row(f"{label} ({len(chosen)})", sum(s.total for s in chosen), sums,
                       sum(s.llm_calls for s in chosen)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("paths", nargs="+", type=Path)
    parser.add_argument("--json", action="store_true", help="one JSON object per run instead of the table")
    args = parser.parse_args(argv)
    splits = [s for p in args.paths for j in journals(p) if (s := split(j)) is not None]
    if not splits:
        print("no finished run journals under " + ", ".join(map(str, args.paths)), file=sys.stderr)
        return 1
    if args.json:
        for s in splits:
            print(json.dumps(asdict(s)))
    else:
        report(splits)
    return 0


if __name__ == "__main__":
    sys.exit(main())
