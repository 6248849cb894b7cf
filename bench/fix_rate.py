"""Fix rate of `agentls fix` over bench/corpus: how many small real bugs the pipeline fixes.

    .venv/bin/python bench/fix_rate.py [--tasks NAME ...] [--max-iterations N] [--out results.json]

Each task (bench/corpus/<task>/: a module, its test, task.toml, fix.patch) is
copied to a temp dir without task.toml and fix.patch, and `agentls fix DIR
--json --apply` runs on the copy against whatever endpoint is configured
(AGENTLS_BASE_URL / OPENAI_BASE_URL, else the bundled local model, started
once here and reused by every run; each run gets a cache dir of its own, so
the failure memory starts empty and no task learns from an earlier run of
itself). A run counts as fixed when agentls says
so; the applied change is then re-checked here by running pytest on the copy.

Prints fixed/total by the mutant search alone (no model call), after
iteration 1 and after the last iteration, the
median wall time and tokens per task, and every task that was not fixed
with its final status. Not run by the test suite: it takes a while.
"""

from __future__ import annotations

import argparse
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
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
CORPUS = ROOT / "bench" / "corpus"


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
    sys.path.insert(0, str(ROOT))
    from agent_core.local_model.endpoint import ensure_local_endpoint
    from agent_core.settings import load_settings

    return ensure_local_endpoint(load_settings())


def _independent_check(workspace: Path) -> bool:
    proc = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=workspace,
                          capture_output=True, text=True, env=_env(), timeout=120)
    return proc.returncode == 0


def _search_outcome(workspace: Path, run_id: str) -> tuple[str, str]:
    """("search", "file:line: before -> after") when the mutant search fixed the task, else ("", "")."""
    journal = workspace / ".agentls" / "runs" / run_id / "journal.jsonl"
    try:
        records = [json.loads(line) for line in journal.read_text(encoding="utf-8").splitlines()] if run_id else []
    except (OSError, json.JSONDecodeError):
        return "", ""
    found = next((r.get("found") for r in records if r.get("type") == "search" and r.get("found")), None)
    if not found:
        return "", ""
    return "search", f"{found['file']}:{found['line']}: {found['before'].strip()} -> {found['after'].strip()}"


def run_task(task: Path, args: argparse.Namespace, scratch: Path) -> dict:
    meta = tomllib.loads((task / "task.toml").read_text(encoding="utf-8"))
    workspace = scratch / task.name
    shutil.copytree(task, workspace, ignore=shutil.ignore_patterns("task.toml", "fix.patch", "__pycache__"))
    cmd = [*args.agentls, "fix", str(workspace), "--json", "--apply"]
    if args.base_url:
        cmd += ["--base-url", args.base_url]  # the cache dir is per task: the local server is not found there
    if args.max_iterations:
        cmd += ["--max-iterations", str(args.max_iterations)]
    started = time.monotonic()
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=args.timeout,
                              env=fresh_memory_env(scratch, task.name))
        lines = proc.stdout.strip().splitlines()
        summary = json.loads(lines[-1]) if lines else {"status": "error", "error": proc.stderr.strip()[-300:]}
    except subprocess.TimeoutExpired:
        summary = {"status": "timeout", "error": f"no result within {args.timeout:.0f} s"}
    except json.JSONDecodeError:
        summary = {"status": "error", "error": "last stdout line is not JSON"}
    wall = time.monotonic() - started
    usage = summary.get("usage") or {}
    found_by, search_edit = _search_outcome(workspace, summary.get("run_id") or "")
    fixed = summary.get("status") == "fixed"
    return {
        "task": task.name, "kind": meta.get("kind", "?"), "status": summary.get("status", "error"),
        "iterations": summary.get("iterations", 0), "wall_s": round(wall, 1), "found_by": found_by,
        "search_edit": search_edit,
        "tokens": int(usage.get("prompt_tokens", 0)) + int(usage.get("completion_tokens", 0)),
        "llm_calls": usage.get("llm_calls", 0), "verified": fixed and _independent_check(workspace),
        "error": summary.get("error"), "failures": [f.get("nodeid") for f in summary.get("failures", [])][:3],
    }


def report(results: list[dict]) -> str:
    total = len(results)
    first = sum(1 for r in results if r["status"] == "fixed" and r["iterations"] <= 1)
    last = sum(1 for r in results if r["status"] == "fixed")
    verified = sum(1 for r in results if r["verified"])
    searched = sum(1 for r in results if r["status"] == "fixed" and r.get("found_by") == "search")
    lines = [
        f"tasks: {total}",
        f"fixed by the search alone:  {searched}/{total} (0 tokens)",
        f"fixed after iteration 1:    {first}/{total}",
        f"fixed after last iteration: {last}/{total} (re-checked by pytest here: {verified}/{total})",
        f"median wall time per task:  {statistics.median(r['wall_s'] for r in results):.1f} s" if results else "",
        f"median tokens per task:     {statistics.median(r['tokens'] for r in results):.0f}" if results else "",
    ]
    searched_edits = [r for r in results if r.get("search_edit")]
    if searched_edits:
        lines.append("fixed by the search (review: a mutant passes the tests, it may not be the intended fix):")
        lines += [f"  {r['task']:<32} {r['search_edit']}"[:200] for r in searched_edits]
    unfixed = [r for r in results if r["status"] != "fixed" or not r["verified"]]
    if unfixed:
        lines.append("not fixed:")
        for r in unfixed:
            why = r["error"] or ", ".join(n for n in r["failures"] if n) or ("fixed but re-check failed"
                                                                            if r["status"] == "fixed" else "")
            lines.append(f"  {r['task']:<32} {r['kind']:<22} {r['status']:<8} it={r['iterations']} {why}"[:200])
    return "\n".join(line for line in lines if line)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", help="only these task names")
    parser.add_argument("--max-iterations", type=int, help="passed to agentls fix")
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per task before giving up")
    parser.add_argument("--out", type=Path, help="write per-task results as JSON here")
    parser.add_argument("--agentls", nargs="+", default=[sys.executable, "-m", "agent_core"],
                        help="the agentls command (default: this Python's agent_core)")
    args = parser.parse_args(argv)
    # `kill` unwinds like Ctrl-C: the running tool is killed and the scratch copies are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    tasks = sorted(p for p in CORPUS.iterdir() if (p / "task.toml").is_file())
    if args.tasks:
        tasks = [t for t in tasks if t.name in set(args.tasks)]
    url = ensure_endpoint()
    args.base_url = url
    print(f"endpoint: {url or os.environ.get('AGENTLS_BASE_URL') or os.environ.get('OPENAI_BASE_URL')}",
          file=sys.stderr)
    results = []
    with tempfile.TemporaryDirectory(prefix="agentls-fixrate-") as scratch:
        for n, task in enumerate(tasks, start=1):
            result = run_task(task, args, Path(scratch))
            results.append(result)
            print(f"[{n}/{len(tasks)}] {task.name}: {result['status']} it={result['iterations']} "
                  f"{result['wall_s']} s {result['tokens']} tokens", file=sys.stderr, flush=True)
    if args.out:
        args.out.write_text(json.dumps(results, indent=2), encoding="utf-8")
    print(report(results))
    return 0


if __name__ == "__main__":
    sys.exit(main())
