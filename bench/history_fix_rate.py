"""Fix rate of `agentls fix` on the real-history corpus (bench/history_corpus/): green, and the author's way.

    .venv/bin/python -m bench.history_corpus fetch        # once: sdists and each project version's venv
    .venv/bin/python -m bench.history_fix_rate --search-only [--tasks PROJECT/BUG ...] [--projects NAME ...]
        [--timeout S] [--time-budget S] [--max-iterations N] [--memory fresh|carried] [--out rows.json]

Each task is a fresh copy of a project's released tree with one fix its
authors made taken out again (history_corpus.py), with its own `.venv` of the
manifest's Python, and `.agentls.toml` naming the project's test command, as
a user's checkout would have; the bug's place is never named. agentls runs as
a user would (`agentls fix COPY --json --apply`, bench/fix_rate.py's
run_one); `--search-only` points it at an endpoint that does not answer
(http://127.0.0.1:9/v1), so only localization and the mutant search can fix
it, at 0 tokens; without it the configured endpoint (or the bundled local
model) is used. Each run has a time budget (`time_budget_s`, --time-budget,
by default --timeout less BUDGET_MARGIN_S), so it ends on its own with its
best attempt (status budget_spent) before the bench's --timeout cuts it.

Per task: green (agentls said fixed and the project's suite passes here with
the copy's `.venv`), the author's way (the files the author's fix touches are
the author's, byte for byte ("same") or as Python syntax trees, ast.dump
("equivalent"), and no other source file of the tree differs from the
author's in its syntax tree), by the search or by the model, tokens, wall
time, and the machine's load average (os.getloadavg) at the task's start and
end: other jobs on a shared machine slow every run. Prints a table and totals;
--out writes the rows and the run's metadata as JSON.
"""

from __future__ import annotations

import argparse
import ast
import contextlib
import datetime
import json
import os
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
from functools import partial
from pathlib import Path

from unidiff import PatchSet

from bench import fix_rate
from bench import history_corpus as hc
from bench.support import real_projects as rp

DEAD_ENDPOINT = "http://127.0.0.1:9/v1"
# What a task's --timeout holds besides the run's time budget: the agentls process's start (its imports take
# seconds on a busy CPU), ending cleanly at the deadline, the journal and the JSON line.
BUDGET_MARGIN_S = 20.0
_SKIP_DIRS = {".venv", ".agentls", "__pycache__", ".git", ".tox", "build", "dist"}


def _syntax(text: str) -> str | None:
    try:
        return ast.dump(ast.parse(text))
    except (SyntaxError, ValueError):
        return None


def _sources(tree: Path) -> dict[str, Path]:
    """The tree's .py files by relative path, outside venvs and agentls's own folders."""
    found = {}
    for path in tree.rglob("*.py"):
        rel = path.relative_to(tree)
        if not _SKIP_DIRS & set(rel.parts[:-1]):
            found[str(rel)] = path
    return found


def author_way(bug: hc.HistoryBug, workspace: Path) -> str:
    """"same" / "equivalent" (see the module docstring) or "different: <why>"."""
    author = hc.author_tree(bug)
    mine, theirs = _sources(workspace), _sources(author)
    stray = sorted(set(mine) - set(theirs))
    if stray:
        return f"different: new file {stray[0]}"
    verdict = "same"
    for rel, path in mine.items():
        ours, original = path.read_bytes(), theirs[rel].read_bytes()
        if ours == original:
            continue
        if _syntax(ours.decode("utf-8", "replace")) != _syntax(original.decode("utf-8", "replace")):
            return f"different: {rel}"
        verdict = "equivalent"
    return verdict


def _check(bug: hc.HistoryBug, verdicts: dict[str, str], workspace: Path) -> bool:
    """The project's suite on the copy after the run (the task's `check`); records the author's-way verdict."""
    verdicts[bug.task] = author_way(bug, workspace)
    return rp.run_suite(bug.env, workspace).green


def history_tasks(bugs: list[hc.HistoryBug], verdicts: dict[str, str], time_budget_s: float = 0.0
                  ) -> list[fix_rate.Task]:
    """The bugs as fix_rate tasks: each copy's `.agentls.toml` names its test command and (when > 0) the run's
    time budget."""
    budget = {"time_budget_s": time_budget_s} if time_budget_s > 0 else {}
    return [fix_rate.Task(name=bug.task, kind=bug.kind, prepare=partial(hc.buggy_copy, bug),
                          check=partial(_check, bug, verdicts),
                          settings={"test_command": shlex.join(["pytest", *bug.env.pytest_args()]), **budget})
            for bug in bugs]


def time_budget(args: argparse.Namespace) -> float:
    """--time-budget, or --timeout less BUDGET_MARGIN_S (0: none, when the timeout leaves no room for one)."""
    if args.time_budget is not None:
        return max(0.0, args.time_budget)
    return max(0.0, args.timeout - BUDGET_MARGIN_S)


def _load() -> float:
    return round(os.getloadavg()[0], 2)


def interleaved(bugs: list[hc.HistoryBug]) -> list[hc.HistoryBug]:
    """One bug of each project in turn, so that a run cut short still spans the projects."""
    queues: dict[str, list[hc.HistoryBug]] = {}
    for bug in bugs:
        queues.setdefault(bug.project, []).append(bug)
    order: list[hc.HistoryBug] = []
    while any(queues.values()):
        order += [queue.pop(0) for queue in queues.values() if queue]
    return order


def run_tasks(bugs: list[hc.HistoryBug], args: argparse.Namespace, meta: dict) -> list[dict]:
    """Each bug through fix_rate.run_one, in order, with its verdict, Python and the load around it; --out is
    rewritten after each task, so a run cut short keeps what it measured."""
    verdicts: dict[str, str] = {}
    tasks = history_tasks(bugs, verdicts, time_budget(args))
    rows = []
    kept = tempfile.mkdtemp(prefix="agentls-history-") if args.keep else None
    with contextlib.nullcontext(kept) if kept else tempfile.TemporaryDirectory(prefix="agentls-history-") as scratch:
        memory = fix_rate.Memory(args.memory, Path(scratch), args.memory_file.resolve() if args.memory_file else None)
        for n, (bug, task) in enumerate(zip(bugs, tasks, strict=True), start=1):
            load_start = _load()
            row = fix_rate.run_one(task, args, memory)
            row["fills_at_author"] = holes_at_author(row["split"]["holes"], author_lines(bug))
            removed, added = bug.changed_lines
            row |= {"python": bug.python, "version": f"{bug.previous}->{bug.version}", "fix_lines": [removed, added],
                    "author_way": verdicts.get(bug.task, "") if row["verified"] else "",
                    "load_start": load_start, "load_end": _load()}
            rows.append(row)
            print(f"[{n}/{len(tasks)}] {task.name}: {row['outcome']} ({row['status']}) {row['author_way']} "
                  f"{row['wall_s']} s {row['tokens']} tokens load {load_start}->{row['load_end']}",
                  file=sys.stderr, flush=True)
            if args.out:
                args.out.write_text(json.dumps({"meta": meta | {"load_end": _load(), "done": len(rows)},
                                                "rows": rows}, indent=2), encoding="utf-8")
    return rows


def is_author_way(row: dict) -> bool:
    return row["verified"] and row["author_way"] in ("same", "equivalent")


def table(rows: list[dict]) -> str:
    lines = [f"{'task':<50} {'kind':<14} {'py':<5} {'outcome':<11} {'author':<11} {'tokens':>7} {'wall s':>7} "
             f"{'load':>9}"]
    lines += [f"{r['task']:<50} {r['kind']:<14} {r['python']:<5} {r['outcome']:<11} "
              f"{(r['author_way'] or '-').split(':')[0]:<11} {r['tokens']:>7,} {r['wall_s']:>7.1f} "
              f"{r['load_start']:>4.1f}-{r['load_end']:<4.1f}" for r in rows]
    return "\n".join(lines)


def _share(rows: list[dict], pred) -> str:
    return f"{sum(1 for r in rows if pred(r))}/{len(rows)}"


def author_lines(bug: hc.HistoryBug) -> dict[str, set[int]]:
    """Per file, the lines of the buggy tree the author's fix touches: each line it removes, and for lines it
    adds, the line they go before."""
    places: dict[str, set[int]] = {}
    for patched in PatchSet(bug.fix.strip("\n") + "\n"):
        lines = places.setdefault(patched.path, set())
        for hunk in patched:
            at = hunk.source_start
            for line in hunk:
                if line.is_added:
                    lines.add(at)
                elif line.source_line_no is not None:
                    at = line.source_line_no + 1
                    if line.is_removed:
                        lines.add(line.source_line_no)
    return places


def holes_at_author(holes: list[list[str]], places: dict[str, set[int]]) -> int:
    """How many of the fills' holes ([path, label] as the journal names them: `line 12 (line)`, `lines 3-7
    (block)`, `slot after line 12`) cover or touch a line the author's fix changes (a slot touches the lines
    on either side of it)."""
    count = 0
    for path, label in holes:
        numbers = [int(n) for n in re.findall(r"\d+", label or "")]
        if numbers and any(min(numbers) - 1 <= n <= max(numbers) + 1 for n in places.get(path, ())):
            count += 1
    return count


def fills(rows: list[dict]) -> list[str]:
    """What the model's fills did over the rows whose fills sampled a hole (their journals' `infill` figures):
    holes, samples, candidates and candidates per minute of the fills' own time, whether they reached the
    author's lines, the answers that changed nothing, the candidates made at twins, the conditions negated, the
    time a model round could not use given to the fills, and the median split of a task's time."""
    asked = [r for r in rows if (r.get("split", {}).get("infill") or {}).get("holes")]
    figures = [r["split"]["infill"] for r in asked]
    if not figures:
        return []
    seconds = sum(float(f.get("seconds") or 0) for f in figures)
    kept = sum(int(f.get("kept") or 0) for f in figures)
    measured = [r for r in asked if "fills_at_author" in r]  # rows of runs before that figure was kept lack it
    reached = sum(1 for r in measured if r["fills_at_author"])
    lines = [f"model fills: {len(figures)} tasks asked, {sum(int(f.get('holes') or 0) for f in figures)} holes, "
             f"{sum(int(f.get('samples') or 0) for f in figures)} samples, {kept} candidates, "
             f"{sum(int(f.get('tried') or 0) for f in figures)} tried, "
             f"{kept / (seconds / 60) if seconds else 0:.1f} candidates per minute of sampling ({seconds:.0f} s)",
             *([f"tasks whose fills reached a line of the author's fix: {reached}/{len(measured)}"]
               if measured else [])]
    counted = [f for f in figures if "unchanged" in f]  # runs since 2026-12-04
    if counted:
        lines.append(f"answers that wrote their hole back as it was: {sum(int(f['unchanged']) for f in counted)} "
                     f"of {sum(int(f.get('answered') or 0) for f in counted)}")
    twinned = [f for f in figures if "twins" in f]  # runs since 2026-12-05
    if twinned:
        lines.append(f"candidates made at a line's twins too: {sum(int(f['twins']) for f in twinned)}")
    deadened = [f for f in figures if "dead" in f]  # runs since 2026-12-06
    if deadened:
        lines.append(f"answers dropped for leaving statements that never run: {sum(int(f['dead']) for f in deadened)}")
    unbound = [f for f in figures if "unbound" in f]  # runs since 2026-12-07 (analysis/unbound.py)
    if unbound:
        lines.append(f"answers dropped for reading a name nothing binds there: "
                     f"{sum(int(f['unbound']) for f in unbound)}")
    turned = [f for f in figures if "turned" in f]  # runs since 2026-12-06 (infill/turned.py)
    if turned:
        lines.append(f"candidates that negated a condition the model wrote: {sum(int(f['turned']) for f in turned)}")
    extended = [float(f["extended_s"]) for f in figures if f.get("extended_s")]  # since 2026-12-07 (FillsEnd)
    if extended:
        lines.append(f"fills whose end moved on (at their pace no model round could finish): {len(extended)} tasks, "
                     f"median {statistics.median(extended):.1f} s later")
    nodes = [r["split"]["nodes"] for r in rows if r.get("split", {}).get("nodes")]
    if nodes:
        names = sorted({name for n in nodes for name in n})
        lines.append("time per task, median s: " + ", ".join(
            f"{name} {statistics.median(n.get(name, 0.0) for n in nodes):.1f}" for name in names)
            + f"; of the search, sampling {statistics.median(float(f.get('seconds') or 0) for f in figures):.1f}")
    return lines


def report(rows: list[dict]) -> str:
    multi = [r for r in rows if r["kind"] != "one-line"]
    lines = [
        f"green (fixed, suite re-checked here): {_share(rows, lambda r: r['verified'])}",
        f"the author's way:                     {_share(rows, is_author_way)}",
        f"by the search:                        {_share(rows, lambda r: r['outcome'] == 'search')}",
        f"by the model's fills (infill):        {_share(rows, lambda r: r['outcome'] == 'infill')}",
        f"by the planner and coder:             "
        f"{_share(rows, lambda r: r['outcome'] in ('first round', 'later round'))}",
        f"more than one line (not one-line):    green {_share(multi, lambda r: r['verified'])}, "
        f"the author's way {_share(multi, is_author_way)}",
    ]
    if rows:
        walls = [r["wall_s"] for r in rows]
        loads = [r["load_start"] for r in rows] + [r["load_end"] for r in rows]
        lines += [f"wall time: median {statistics.median(walls):.1f} s, total {sum(walls):.0f} s, "
                  f"max {max(walls):.1f} s, over 300 s: {sum(1 for w in walls if w > 300)}",
                  f"tokens: median {statistics.median(r['tokens'] for r in rows):,.0f}, "
                  f"total {sum(r['tokens'] for r in rows):,}",
                  *fills(rows),
                  f"load average (1 min) at task starts/ends: min {min(loads):.1f}, "
                  f"median {statistics.median(loads):.1f}, max {max(loads):.1f}"]
    wrong = [r for r in rows if r["verified"] and not is_author_way(r)]
    if wrong:
        lines.append("green but not the author's way (review):")
        lines += [f"  {r['task']:<48} {r['search_edit'] or r['author_way']}"[:200] for r in wrong]
    return "\n".join(lines)


def markdown(rows: list[dict]) -> str:
    """The table of docs/benchmarks.md: one line per bug with its run's outcome."""
    bugs = {b.task: b for b in hc.load_bugs()}
    lines = ["| bug | versions | Python | kind | fix -/+ | outcome | author's way | wall s |",
             "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        bug = bugs.get(r["task"])
        removed, added = bug.changed_lines if bug else (0, 0)
        lines.append(f"| `{r['task']}` | {r['version']} | {r['python']} | {r['kind']} | -{removed}/+{added} | "
                     f"{r['outcome']} | {(r['author_way'] or '-').split(':')[0]} | {r['wall_s']:.0f} |")
    return "\n".join(lines)


def _commit() -> str:
    proc = subprocess.run(["git", "-C", str(rp.ROOT), "rev-parse", "--short", "HEAD"], capture_output=True,
                          text=True, check=False)
    return proc.stdout.strip()


def arguments() -> argparse.ArgumentParser:
    """The command line (module docstring)."""
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", nargs="*", help="only these projects")
    parser.add_argument("--tasks", nargs="*", help="only these PROJECT/BUG tasks")
    parser.add_argument("--search-only", action="store_true",
                        help=f"the model off: agentls's endpoint is {DEAD_ENDPOINT}, which does not answer")
    fix_rate.add_common_arguments(parser)
    parser.add_argument("--interleave", action="store_true", help="one bug of each project in turn")
    parser.add_argument("--time-budget", type=float,
                        help=f"each run's time_budget_s (default: --timeout less {BUDGET_MARGIN_S:.0f} s; 0: none)")
    parser.add_argument("--markdown-from", type=Path, help="print the docs table of an --out file and stop")
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    if args.markdown_from:
        saved = json.loads(args.markdown_from.read_text(encoding="utf-8"))
        print(markdown(saved["rows"]))
        print(report(saved["rows"]))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.search_only:
        os.environ |= {"AGENTLS_BASE_URL": DEAD_ENDPOINT, "AGENTLS_API_KEY": "x"}
    try:
        bugs = [b for b in hc.load_bugs() if (not args.projects or b.project in args.projects)
                and (not args.tasks or b.task in args.tasks)]
        if not bugs:
            print("no task selected", file=sys.stderr)
            return 2
        for group in hc.by_version(bugs).values():  # sdists and venvs before any task's clock starts
            hc.author_tree(group[0])
            hc.ensure_env(group[0])
        args.base_url = fix_rate.ensure_endpoint()
        meta = {"commit": _commit(), "started": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
                "load_start": _load(), "search_only": args.search_only, "argv": sys.argv[1:], "tasks": len(bugs),
                "time_budget_s": time_budget(args),
                "endpoint": args.base_url or os.environ.get("AGENTLS_BASE_URL") or os.environ.get("OPENAI_BASE_URL")}
        rows = run_tasks(interleaved(bugs) if args.interleave else bugs, args, meta)
    except rp.CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    print(table(rows))
    print(report(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
