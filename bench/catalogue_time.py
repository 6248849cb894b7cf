"""How long the search takes to make its own candidates on large real modules (not a test; prints figures).

    .venv/bin/python -m bench.catalogue_time [--baseline CHECKOUT] [--runs 3] [--lines 40] [--modules PATH ...]

For the largest module of each project of the real-history corpus (the trees
`python -m bench.history_corpus fetch` caches), the catalogue's mutants
(`line_mutants`) and the templates (`template_mutants`) of LINES statement
lines of its functions' bodies spread evenly over the module, made in a fresh process RUNS times:
the median seconds. With --baseline, the same with another checkout's
`agent_core` first on PYTHONPATH (a git worktree of an earlier commit), side
by side with the ratio, and whether both made the same candidates (a digest
of every candidate's path, lines, text, description and tier). Then the
screen every candidate passes before it is tried (search/driver/screen.py:
refused if it would swallow the tests' errors, early returns last): its
median seconds, and how many candidates it kept. --modules measures the
given modules instead (e.g. more-itertools' `more.py` of the real-project
corpus's cache).

Run it on an idle machine: it measures CPU time spent in one process.
"""

from __future__ import annotations

import argparse
import ast
import json
import os
import statistics
import subprocess
import sys
from pathlib import Path

from bench import history_corpus as hc

_SKIP = {"tests", "test", "docs", "examples", ".venv"}
# Run in a fresh interpreter, so that the checkout on PYTHONPATH is the agent_core measured and no cache of an
# earlier module (parsed trees, tokens) is warm.
_MEASURE = r"""
import hashlib, json, sys, time
from agent_core.search.catalogue.line_mutants import line_mutants
from agent_core.search.templates.table import template_mutants
path, lines = sys.argv[1], json.loads(sys.argv[2])
source = open(path, encoding="utf-8").read()
began = time.perf_counter()
made = []
for line in lines:
    made += line_mutants("m.py", source, line)
    made += template_mutants("m.py", source, line, ["ValueError"])
seconds = time.perf_counter() - began
from pathlib import Path
from agent_core.search.driver.screen import Screen
screen = Screen(Path(path).parent, ["ValueError"])
screen.sources["m.py"] = source
began = time.perf_counter()
kept = screen(made)
screened = time.perf_counter() - began
digest = hashlib.sha256(json.dumps([(m.path, m.line, m.last, m.text, m.description, m.tier) for m in made]
                                   + [len(kept)]).encode()).hexdigest()[:12]
import agent_core
print(json.dumps({"seconds": seconds, "screen_seconds": screened, "candidates": len(made), "kept": len(kept),
                  "digest": digest, "from": agent_core.__file__}))
"""


def largest_modules() -> list[Path]:
    """The largest non-test module of each project's first cached tree."""
    trees = hc.cache() / "trees"
    out: dict[str, Path] = {}
    for tree in sorted(trees.iterdir()) if trees.is_dir() else []:
        project = tree.name.rsplit("-", 1)[0]
        if project in out:
            continue
        modules = [p for p in tree.rglob("*.py") if not _SKIP & set(p.relative_to(tree).parts)]
        if modules:
            out[project] = max(modules, key=lambda p: p.stat().st_size)
    return list(out.values())


def statement_lines(path: Path, count: int) -> list[int]:
    """`count` lines that start a statement in a function's body (where localization's suspects are), spread
    evenly over the module."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    functions = [n for n in ast.walk(tree) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)]
    starts = sorted({n.lineno for f in functions for n in ast.walk(f) if isinstance(n, ast.stmt)
                     and not isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef)})
    step = max(1, len(starts) // count)
    return starts[::step][:count]


def measure(checkout: Path, path: Path, lines: list[int], runs: int) -> dict:
    env = {**os.environ, "PYTHONPATH": str(checkout)}
    results = []
    for _ in range(runs):
        done = subprocess.run([sys.executable, "-c", _MEASURE, str(path), json.dumps(lines)], env=env, cwd=checkout,
                              capture_output=True, text=True, check=True)  # `-c` puts the working directory first
        results.append(json.loads(done.stdout))
    if not results[0]["from"].startswith(str(checkout)):
        raise SystemExit(f"measured {results[0]['from']}, not {checkout}'s agent_core")
    return {"seconds": statistics.median(r["seconds"] for r in results), "candidates": results[0]["candidates"],
            "screen": statistics.median(r["screen_seconds"] for r in results), "kept": results[0]["kept"],
            "digest": results[0]["digest"]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--baseline", type=Path, help="another checkout (its agent_core) measured side by side")
    parser.add_argument("--runs", type=int, default=3)
    parser.add_argument("--lines", type=int, default=40)
    parser.add_argument("--modules", type=Path, nargs="+", help="these modules instead of the history corpus's")
    args = parser.parse_args(argv)
    here = Path(__file__).resolve().parents[1]
    modules = [m.resolve() for m in args.modules] if args.modules else largest_modules()
    if not modules:
        print("no cached trees: run `python -m bench.history_corpus fetch` first", file=sys.stderr)
        return 2
    print(f"{'module':55s} {'lines':>5s} {'cands':>6s} {'kept':>5s} {'this s':>8s} {'screen':>7s}" + (
        f" {'base s':>8s} {'screen':>7s} {'ratio':>6s} same" if args.baseline else ""))
    ratios = []
    for path in modules:
        lines = statement_lines(path, args.lines)
        now = measure(here, path, lines, args.runs)
        name = str(path.relative_to(hc.cache() / "trees")) if path.is_relative_to(hc.cache() / "trees") else str(path)
        row = f"{name[-55:]:55s} {len(lines):5d} {now['candidates']:6d} {now['kept']:5d} {now['seconds']:8.2f} " \
              f"{now['screen']:7.2f}"
        if args.baseline:
            base = measure(args.baseline.resolve(), path, lines, args.runs)
            ratios.append((base["seconds"] + base["screen"]) / (now["seconds"] + now["screen"]))
            row += f" {base['seconds']:8.2f} {base['screen']:7.2f} {ratios[-1]:5.1f}x " \
                   f"{'yes' if base['digest'] == now['digest'] else 'NO'}"
        print(row, flush=True)
    if ratios:
        print(f"median speed-up over the baseline (candidates and screen): {statistics.median(ratios):.1f}x "
              f"(load average at the end: {os.getloadavg()[0]:.2f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
