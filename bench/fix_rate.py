"""Fix rate of `agentls fix` over bench/corpus: how many small real bugs the pipeline fixes.

    .venv/bin/python -m bench.fix_rate [--tasks NAME ...] [--max-iterations N] [--memory fresh|carried]
                                       [--memory-file PATH] [--out results.json]

Each task (bench/corpus/<task>/: a module, its test, task.toml, fix.patch) is
copied to a temp dir without task.toml and fix.patch, and `agentls fix DIR
--json --apply` runs on the copy against whatever endpoint is configured
(AGENTLS_BASE_URL / OPENAI_BASE_URL, else the bundled local model, started
once here and reused by every run). A run counts as fixed when agentls says
so and pytest passes on the copy afterwards (re-checked here).

The failure/pattern memory is set per copy through `AGENTLS_MEMORY__PATH` in
agentls's environment (a project's `.agentls.toml` may not move it outside the
project: docs/configuration.md, "Trust boundary"):
- `--memory fresh` (default): a memory file and cache dir of its own per task,
  so no task learns from another or from an earlier run of itself;
- `--memory carried`: one memory file (`--memory-file`, else one in the
  scratch dir) and one cache dir carried across the whole corpus in order, as
  a user's memory would be.

Each task is reported as fixed by the search alone (agentls's JSON
`found_by == "search"`, or a `search` record with `found` in the run's
journal: a single-edit mutant, 0 tokens, listed with its edit for review; a
result with neither counts as the model's), by the first model round, by a later round,
or not fixed; with its tokens and wall time. Prints a table and totals; --out
writes the rows as JSON. Not run by the test suite: it takes a while. The
real-project corpus (bench/real_fix_rate.py) runs through the same code.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
import tomllib
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "bench" / "corpus"
SLOW_S = 180.0  # the target: no task slower than 3 minutes
OUTCOMES = ("search", "infill", "first round", "later round", "not fixed")


def _env() -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return env


def fresh_memory_env(scratch: Path, name: str) -> dict[str, str]:
    """`_env()` with a cache dir of its own, so no task starts with memories of an earlier run of itself."""
    cache = scratch / f"cache-{name}"
    cache.mkdir(parents=True, exist_ok=True)
    return _env() | {"XDG_CACHE_HOME": str(cache)}


def ensure_endpoint() -> str | None:
    """Start (or reuse) the local model once for the whole benchmark unless an endpoint is configured."""
    if os.environ.get("AGENTLS_BASE_URL") or os.environ.get("OPENAI_BASE_URL"):
        return None
    from agent_core.local_model.endpoint import ensure_local_endpoint
    from agent_core.settings import load_settings

    return ensure_local_endpoint(load_settings())


@dataclass
class Task:
    """One benchmark task: how to make its copy, how to re-check it, and settings agentls needs there."""

    name: str
    kind: str
    prepare: Callable[[Path], Path]  # dest -> the workspace, bug in place, answer hidden
    check: Callable[[Path], bool]  # the workspace after the run -> does its suite pass?
    settings: dict = field(default_factory=dict)  # extra top-level `.agentls.toml` keys (e.g. test_command)


@dataclass
class Memory:
    """Where each task's memory lives: its own file (fresh) or one file for the whole corpus (carried)."""

    mode: str
    scratch: Path
    carried_file: Path | None = None

    def file_for(self, task: str) -> Path:
        if self.mode == "carried":
            return self.carried_file or self.scratch / "memory-carried.sqlite"
        return self.scratch / "memory" / f"{task.replace('/', '__')}.sqlite"

    def cache_for(self, task: str) -> Path:
        name = "carried" if self.mode == "carried" else task.replace("/", "__")
        cache = self.scratch / f"cache-{name}"
        cache.mkdir(parents=True, exist_ok=True)
        return cache


def _toml_value(value: object) -> str:
    """A TOML value for a string, number, boolean or list of those (JSON spells them the same way)."""
    return json.dumps(value)


def write_settings(workspace: Path, memory_file: Path, settings: dict) -> None:
    """`.agentls.toml` in the copy: the task's own top-level settings (the memory file's folder is made here;
    the file itself reaches agentls through `memory_env`)."""
    memory_file.parent.mkdir(parents=True, exist_ok=True)
    lines = [f"{key} = {_toml_value(value)}" for key, value in settings.items()]
    text = "\n".join(lines) + "\n"
    tomllib.loads(text)  # a value the writer cannot express is a bug here, not a confusing agentls error
    (workspace / ".agentls.toml").write_text(text, encoding="utf-8")


def memory_env(memory_file: Path) -> dict[str, str]:
    """The memory file as agentls reads it: from the environment (a project file may not set memory.path)."""
    return {"AGENTLS_MEMORY__PATH": str(memory_file)}


def run_agentls(workspace: Path, args: argparse.Namespace, env: dict[str, str]) -> tuple[dict, float]:
    """`agentls fix WORKSPACE --json --apply`: its last JSON line (or an error summary) and the wall time."""
    cmd = [*args.agentls, "fix", str(workspace), "--json", "--apply"]
    if args.base_url:
        cmd += ["--base-url", args.base_url]  # the cache dir is per task: the local server is not found there
    if args.max_iterations:
        cmd += ["--max-iterations", str(args.max_iterations)]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout, env=env, check=False)
        lines = proc.stdout.strip().splitlines()
        summary = json.loads(lines[-1]) if lines else {"status": "error", "error": proc.stderr.strip()[-300:]}
    except subprocess.TimeoutExpired:
        summary = {"status": "timeout", "error": f"no result within {args.timeout:.0f} s"}
    except json.JSONDecodeError:
        summary = {"status": "error", "error": "last stdout line is not JSON"}
    return summary, time.monotonic() - started


def _journal(workspace: Path, run_id: str = "") -> list[dict]:
    """The records of the run's journal (the newest run's when `run_id` is not known: a run cut at the timeout)."""
    if run_id:
        journal = workspace / ".agentls" / "runs" / run_id / "journal.jsonl"
    else:
        found = sorted((workspace / ".agentls" / "runs").glob("*/journal.jsonl"), key=lambda p: p.stat().st_mtime)
        if not found:
            return []
        journal = found[-1]
    try:
        return [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()]
    except (OSError, json.JSONDecodeError):
        return []


def time_split(workspace: Path, run_id: str = "") -> dict:
    """Where a run's time went, from its journal: seconds per pipeline node (summed over its visits), the
    model's fills (`infill`: holes, samples, kept, tried, tokens, seconds, the winning hole, the answers,
    those that wrote their hole back unchanged, the candidates made at a line's twins, the answers dropped as dead
    code or for reading unbound names, the conditions negated; its `per_hole` left
    out but for each hole's path and label,
    `holes`) and the search's own figures (mutants made and tried)."""
    records = _journal(workspace, run_id)
    nodes: dict[str, float] = {}
    for record in records:
        if record.get("type") == "node_exit":
            name = str(record.get("node"))
            nodes[name] = round(nodes.get(name, 0.0) + float(record.get("duration_s") or 0.0), 1)
    search = next((r for r in reversed(records) if r.get("type") == "search"), {})
    figures = search.get("infill") or {}
    infill = {k: v for k, v in figures.items() if k != "per_hole"}
    per_hole = figures.get("per_hole", [])
    holes = [[h.get("path"), h.get("hole")] for h in per_hole]
    if per_hole and all("unchanged" in h for h in per_hole):  # journals since 2026-12-04
        infill["answered"] = sum(int(h.get("answered") or 0) for h in per_hole)
    # answers that wrote their hole back (since 2026-12-04), candidates at twins (12-05), answers dropped as dead
    # code (12-06), conditions negated (12-06, infill/turned.py), answers reading unbound names (12-07,
    # analysis/unbound.py): each summed where every hole counts it
    for key in ("unchanged", "twins", "dead", "turned", "unbound"):
        if per_hole and all(key in h for h in per_hole):
            infill[key] = sum(int(h[key]) for h in per_hole)
    return {"nodes": nodes, "infill": infill, "holes": holes, "mutants": search.get("mutants"),
            "mutants_tried": search.get("tried")}


def search_edit(workspace: Path, run_id: str) -> str:
    """"file:line: before -> after" when the run's journal says the mutant search found the fix, else ""."""
    journal = workspace / ".agentls" / "runs" / run_id / "journal.jsonl"
    try:
        records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()] if run_id else []
    except (OSError, json.JSONDecodeError):
        return ""
    found = next((r.get("found") for r in records if r.get("type") == "search" and r.get("found")), None)
    if not isinstance(found, dict):
        return ""
    return f"{found.get('file')}:{found.get('line')}: {str(found.get('before')).strip()} -> " \
           f"{str(found.get('after')).strip()}"


def found_by(summary: dict, edit: str = "") -> str:
    """Who found the fix: agentls's JSON `found_by` ("search": its search, before any model call), else
    "search" when the journal has the search's edit; anything else, or nothing, is the model's."""
    return str(summary.get("found_by") or ("search" if edit else "model"))


def outcome(row: dict) -> str:
    """One of OUTCOMES for a row: only a fix re-checked here counts."""
    if not row["verified"]:
        return "not fixed"
    if row["found_by"] in ("search", "infill"):
        return str(row["found_by"])
    return "first round" if row["iterations"] <= 1 else "later round"


def journal_usage(workspace: Path) -> dict:
    """Tokens and calls of the newest run's journal (`llm_call` records): a run cut at the timeout writes no
    summary, and "0 tokens" would hide what it spent."""
    journals = sorted((workspace / ".agentls" / "runs").glob("*/journal.jsonl"), key=lambda p: p.stat().st_mtime)
    usage = {"prompt_tokens": 0, "completion_tokens": 0, "llm_calls": 0}
    try:
        records = [json.loads(line) for line in journals[-1].read_text(encoding="utf-8").splitlines()] if journals \
            else []
    except (OSError, json.JSONDecodeError):
        return usage
    for record in records:
        if record.get("type") == "llm_call":
            spent = record.get("usage") or {}
            usage["prompt_tokens"] += int(spent.get("prompt_tokens") or 0)
            usage["completion_tokens"] += int(spent.get("completion_tokens") or 0)
            usage["llm_calls"] += 1
    return usage


def make_row(task: Task, summary: dict, wall: float, verified: bool, memory: str, edit: str = "") -> dict:
    usage = summary.get("usage") or {}
    row = {
        "task": task.name, "kind": task.kind, "memory": memory, "status": summary.get("status", "error"),
        "found_by": found_by(summary, edit), "search_edit": edit, "iterations": summary.get("iterations", 0),
        "wall_s": round(wall, 1),
        "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        "llm_calls": usage.get("llm_calls", 0), "verified": verified,
        "error": summary.get("error"), "failures": [f.get("nodeid") for f in summary.get("failures", [])][:3],
    }
    row["outcome"] = outcome(row)
    return row


def run_one(task: Task, args: argparse.Namespace, memory: Memory) -> dict:
    workspace = task.prepare(memory.scratch / "work" / task.name.replace("/", "__"))
    write_settings(workspace, memory.file_for(task.name), task.settings)
    env = _env() | memory_env(memory.file_for(task.name)) | {"XDG_CACHE_HOME": str(memory.cache_for(task.name))}
    summary, wall = run_agentls(workspace, args, env)
    if "usage" not in summary:  # cut at the timeout: what its model calls spent is in its journal
        summary["usage"] = journal_usage(workspace)
    fixed = summary.get("status") == "fixed"
    edit = search_edit(workspace, str(summary.get("run_id") or "")) if fixed else ""
    row = make_row(task, summary, wall, fixed and task.check(workspace), memory.mode, edit)
    row["split"] = time_split(workspace, str(summary.get("run_id") or ""))
    if not args.keep:
        shutil.rmtree(workspace, ignore_errors=True)
    return row


def table(rows: list[dict]) -> str:
    """One line per task: outcome, iterations, tokens, wall time."""
    lines = [f"{'task':<48} {'kind':<20} {'outcome':<12} {'it':>2} {'tokens':>7} {'wall s':>7}"]
    lines += [f"{r['task']:<48} {r['kind']:<20} {r['outcome']:<12} {r['iterations']:>2} {r['tokens']:>7,} "
              f"{r['wall_s']:>7.1f}" for r in rows]
    return "\n".join(lines)


def report(results: list[dict]) -> str:
    total = len(results)
    first = sum(1 for r in results if r["status"] == "fixed" and r["iterations"] <= 1)
    last = sum(1 for r in results if r["status"] == "fixed")
    verified = sum(1 for r in results if r["verified"])
    by = {name: sum(1 for r in results if outcome(r) == name) for name in OUTCOMES}
    lines = [
        f"tasks: {total}" + (f" (memory: {results[0].get('memory', 'fresh')})" if results else ""),
        f"fixed after iteration 1:    {first}/{total}",
        f"fixed after last iteration: {last}/{total} (re-checked by pytest here: {verified}/{total})",
        f"fixed by search alone:      {by['search']}/{total} (0 tokens)",
        f"fixed by the model's fills: {by['infill']}/{total} (its candidates, verified by the search's driver)",
        f"fixed by first model round: {by['first round']}/{total}",
        f"fixed by later rounds:      {by['later round']}/{total}",
    ]
    if results:
        lines += [
            f"median wall time per task:  {statistics.median(r['wall_s'] for r in results):.1f} s",
            (f"total wall time:            {sum(r['wall_s'] for r in results):.0f} s; "
             f"slowest {max(r['wall_s'] for r in results):.1f} s; "
             f"over {SLOW_S:.0f} s: {sum(1 for r in results if r['wall_s'] > SLOW_S)}"),
            f"median tokens per task:     {statistics.median(r['tokens'] for r in results):.0f}",
            f"total tokens:               {sum(r['tokens'] for r in results):,}",
        ]
    searched = [r for r in results if r.get("search_edit")]
    if searched:
        lines.append("fixed by the search (review: a mutant passes the tests, it may not be the intended fix):")
        lines += [f"  {r['task']:<32} {r['search_edit']}"[:200] for r in searched]
    unfixed = [r for r in results if r["status"] != "fixed" or not r["verified"]]
    if unfixed:
        lines.append("not fixed:")
        for r in unfixed:
            why = r["error"] or ", ".join(n for n in r["failures"] if n) or ("fixed but re-check failed"
                                                                            if r["status"] == "fixed" else "")
            lines.append(f"  {r['task']:<32} {r['kind']:<22} {r['status']:<8} it={r['iterations']} {why}"[:200])
    return "\n".join(lines)


def _pytest_passes(workspace: Path) -> bool:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=workspace,
                          capture_output=True, text=True, env=_env(), timeout=120, check=False)
    return proc.returncode == 0


def corpus_task(path: Path) -> Task:
    meta = tomllib.loads((path / "task.toml").read_text(encoding="utf-8"))

    def prepare(dest: Path) -> Path:
        shutil.copytree(path, dest, ignore=shutil.ignore_patterns("task.toml", "fix.patch", "__pycache__"))
        return dest

    return Task(name=path.name, kind=meta.get("kind", "?"), prepare=prepare, check=_pytest_passes)


def add_common_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--max-iterations", type=int, help="passed to agentls fix")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per task before giving up")
    parser.add_argument("--memory", choices=("fresh", "carried"), default="fresh",
                        help="a memory of its own per task, or one carried across the corpus in order")
    parser.add_argument("--memory-file", type=Path, help="with --memory carried: this file (kept afterwards)")
    parser.add_argument("--keep", action="store_true",
                        help="keep the scratch dir (each task's copy, the memory files, the caches) afterwards")
    parser.add_argument("--out", type=Path, help="write per-task results as JSON here")
    parser.add_argument("--agentls", nargs="+", default=[sys.executable, "-m", "agent_core"],
                        help="the agentls command (default: this Python's agent_core)")


def run_corpus(tasks: list[Task], args: argparse.Namespace) -> int:
    """Run every task in order with the chosen memory mode; print the table and totals; write --out."""
    # `kill` unwinds like Ctrl-C: the running tool is killed and the scratch copies are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    if args.memory_file and args.memory != "carried":
        print("--memory-file needs --memory carried", file=sys.stderr)
        return 2
    if args.memory_file and args.memory_file.exists():
        print(f"--memory-file {args.memory_file} exists: a carried run starts from an empty memory; "
              "remove it or name another file", file=sys.stderr)
        return 2
    args.base_url = ensure_endpoint()
    print(f"endpoint: {args.base_url or os.environ.get('AGENTLS_BASE_URL') or os.environ.get('OPENAI_BASE_URL')}"
          f"; memory: {args.memory}", file=sys.stderr)
    results = []
    kept = tempfile.mkdtemp(prefix="agentls-fixrate-") if args.keep else None
    with contextlib.nullcontext(kept) if kept else tempfile.TemporaryDirectory(prefix="agentls-fixrate-") as scratch:
        if kept:
            print(f"copies, memory files and caches are kept in {kept}", file=sys.stderr)
        memory = Memory(args.memory, Path(scratch), args.memory_file.resolve() if args.memory_file else None)
        for n, task in enumerate(tasks, start=1):
            result = run_one(task, args, memory)
            results.append(result)
            print(f"[{n}/{len(tasks)}] {task.name}: {result['outcome']} ({result['status']}) "
                  f"it={result['iterations']} {result['wall_s']} s {result['tokens']} tokens",
                  file=sys.stderr, flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(table(results))
    print(report(results))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", help="only these task names")
    add_common_arguments(parser)
    args = parser.parse_args(argv)
    paths = sorted(p for p in CORPUS.iterdir() if (p / "task.toml").is_file())
    if args.tasks:
        paths = [t for t in paths if t.name in set(args.tasks)]
    return run_corpus([corpus_task(p) for p in paths], args)


if __name__ == "__main__":
    sys.exit(main())
