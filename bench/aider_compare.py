"""agentls against Aider, side by side, on the same corpus, model and endpoint.

    .venv/bin/python -m bench.aider_compare [--tasks NAME ...] [--every N] [--aider-venv DIR]
                                            [--out results.json [--resume]] [--aider-rows EARLIER.json ...]
                                            [--agentls-rows FIX_RATE.json ...]

Both tools talk to the same OpenAI-compatible endpoint (AGENTLS_BASE_URL /
OPENAI_BASE_URL, else the bundled local model, started once) through
bench/support/token_proxy.py, so their tokens are counted the same way, from the
upstream's own `usage`. Each task of bench/corpus is copied twice; agentls (with an empty failure
memory of its own per task)
runs `agentls fix --json --apply` on one copy, Aider runs on the other with
the module(s) editable, the tests read-only, `--edit-format whole` (the only
format that works with the 1.5B model here), `--auto-test` with the same
pytest command, and a message holding the failing test output (the same
facts agentls starts from). A task counts as fixed for either tool only when
pytest passes on its copy afterwards, checked here the same way for both.

Aider comes from PyPI (`pip install aider-chat`) into its own virtualenv
(bench/.aider-venv by default, created on first use). Not run by the tests.
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
from pathlib import Path

from bench.fix_rate import CORPUS, _env, ensure_endpoint, fresh_memory_env
from bench.support.token_proxy import TokenProxy

ROOT = Path(__file__).resolve().parents[1]

PYTEST = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"]


def ensure_aider(venv: Path) -> Path:
    aider = venv / "bin" / "aider"
    if not aider.exists():
        print(f"installing aider-chat into {venv} (one time)", file=sys.stderr)
        subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True)
        subprocess.run([str(venv / "bin" / "pip"), "install", "-q", "aider-chat"], check=True)
    return aider


def copy_task(task: Path, dest: Path) -> Path:
    shutil.copytree(task, dest, ignore=shutil.ignore_patterns("task.toml", "fix.patch", "__pycache__"))
    return dest


def tests_pass(workspace: Path) -> tuple[bool, str]:
    proc = subprocess.run(PYTEST, cwd=workspace, capture_output=True, text=True, env=_env(), timeout=300)
    return proc.returncode == 0, (proc.stdout + proc.stderr)[-3000:]


def run_agentls(workspace: Path, base_url: str, model: str, timeout: float) -> dict:
    cmd = [sys.executable, "-m", "agent_core", "fix", str(workspace), "--json", "--apply",
           "--base-url", base_url, "--model", model]
    try:
        proc = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout,
                              env=fresh_memory_env(workspace.parent.parent, workspace.name))
        lines = proc.stdout.strip().splitlines()
        return json.loads(lines[-1]) if lines else {"status": "error", "error": proc.stderr[-300:]}
    except (subprocess.TimeoutExpired, json.JSONDecodeError) as exc:
        return {"status": "error", "error": type(exc).__name__}


def aider_argv(aider: Path, base_url: str, model: str, message: str, editable: list[str], read_only: list[str],
               test_cmd: str, edit_format: str = "whole") -> list[str]:
    """Aider's command line as both corpora run it: no git, no prompts, `--auto-test`, tests read-only."""
    return [str(aider), "--model", f"openai/{model}", "--openai-api-base", base_url, "--openai-api-key", "none",
            "--edit-format", edit_format, "--no-git", "--yes-always", "--no-stream", "--no-pretty",
            "--no-fancy-input", "--no-check-update", "--analytics-disable", "--no-show-model-warnings",
            "--no-auto-lint", "--auto-test", "--test-cmd", test_cmd,
            "--chat-history-file", os.devnull, "--input-history-file", os.devnull,
            "--message", message, *editable, *[arg for t in read_only for arg in ("--read", t)]]


def invoke_aider(cmd: list[str], workspace: Path, env: dict[str, str], timeout: float) -> dict:
    """Run Aider in `workspace` (its HOME the scratch dir above it); its exit code (None: killed at `timeout`,
    with the test runs it started) and its output."""
    env = env | {"OPENAI_API_KEY": "none", "HOME": str(workspace.parent)}
    with subprocess.Popen(cmd, cwd=workspace, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True,
                          env=env, stdin=subprocess.DEVNULL, start_new_session=True) as proc:
        try:
            out, _ = proc.communicate(timeout=timeout)
            code = proc.returncode
        except subprocess.TimeoutExpired:
            os.killpg(proc.pid, signal.SIGKILL)
            out, _ = proc.communicate()
            code = None
        except BaseException:  # Ctrl-C or `kill` of the bench: Aider and its test runs go with it
            os.killpg(proc.pid, signal.SIGKILL)
            raise
    return {"exit_code": code, "tail": "timeout" if code is None else out[-400:], "output": out}


def run_aider(aider: Path, workspace: Path, base_url: str, model: str, timeout: float) -> dict:
    _, failing = tests_pass(workspace)
    tests = sorted(p.name for p in workspace.rglob("test_*.py"))
    sources = sorted(str(p.relative_to(workspace)) for p in workspace.rglob("*.py")
                     if not p.name.startswith("test_") and p.name != "conftest.py")
    message = ("The tests fail. Fix the bug in the code (not the tests) so that they pass.\n\n"
               f"pytest output:\n{failing}")
    test_cmd = " ".join(PYTEST[1:]).replace("-m pytest", "python -m pytest", 1)
    cmd = aider_argv(aider, base_url, model, message, sources, tests, test_cmd)
    result = invoke_aider(cmd, workspace, _env(), timeout)
    result.pop("output")
    return result


def from_fix_rate(result: dict) -> dict:
    """An agentls cell from a bench/fix_rate.py row (the same `agentls fix --json --apply` on a fresh copy,
    re-checked by pytest there). Its tokens are agentls's own sum of the server's `usage`, not the proxy's."""
    return {"fixed": bool(result["verified"]), "wall_s": result["wall_s"], "tokens": result["tokens"],
            "llm_calls": result["llm_calls"], "detail": result["status"], "iterations": result["iterations"],
            "reused": "fix_rate"}


def compare(task: Path, proxy: TokenProxy, aider: Path, model: str, scratch: Path, timeout: float,
            earlier: dict | None = None, agentls: dict | None = None) -> dict:
    row: dict = {"task": task.name}
    if earlier is not None:  # Aider's row for this task from an earlier run on the same endpoint and model
        row["aider"] = {**earlier, "reused": True}
    if agentls is not None:
        row["agentls"] = agentls
    for tool in [t for t in ("agentls", "aider") if t not in row]:
        workspace = copy_task(task, scratch / tool / task.name)
        proxy.reset()
        started = time.monotonic()
        if tool == "agentls":
            detail = run_agentls(workspace, proxy.base_url, model, timeout)
        else:
            detail = run_aider(aider, workspace, proxy.base_url, model, timeout)
        wall = time.monotonic() - started
        fixed, _ = tests_pass(workspace)
        proxy.wait_idle()  # an answer the tool gave up on still costs tokens, and must not slow the next run
        totals = proxy.totals()
        row[tool] = {"fixed": fixed, "wall_s": round(wall, 1),
                     "tokens": totals["prompt_tokens"] + totals["completion_tokens"],
                     "llm_calls": totals["llm_calls"], "detail": detail.get("status", detail.get("exit_code")),
                     "iterations": detail.get("iterations")}
    return row


def summary(rows: list[dict]) -> str:
    lines = [f"{'task':<32} {'agentls':>18} {'aider':>18}"]
    for r in rows:
        cells = [f"{'fixed' if r[t]['fixed'] else 'no':>6} {r[t]['tokens']:>7}t" for t in ("agentls", "aider")]
        reused = " (aider row reused)" if r["aider"].get("reused") else ""
        reused += " (agentls row from fix_rate)" if r["agentls"].get("reused") == "fix_rate" else ""
        lines.append(f"{r['task']:<32} {cells[0]:>18} {cells[1]:>18}{reused}")
    lines.append("")
    for tool in ("agentls", "aider"):
        fixed = sum(r[tool]["fixed"] for r in rows)
        tokens = [r[tool]["tokens"] for r in rows]
        walls = [r[tool]["wall_s"] for r in rows]
        lines.append(f"{tool:<8} fixed {fixed}/{len(rows)}  median tokens/task {statistics.median(tokens):.0f}  "
                     f"total tokens {sum(tokens)}  median wall {statistics.median(walls):.1f} s")
    first = sum(1 for r in rows if r["agentls"]["fixed"] and (r["agentls"]["iterations"] or 0) <= 1)
    lines.append(f"agentls fixed after iteration 1: {first}/{len(rows)}")
    a_tok = sum(r["agentls"]["tokens"] for r in rows)
    b_tok = sum(r["aider"]["tokens"] for r in rows)
    if b_tok:
        lines.append(f"token ratio agentls/aider: {a_tok / b_tok:.2f} (target <= 0.50)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--tasks", nargs="*", help="only these task names")
    parser.add_argument("--aider-venv", type=Path, default=ROOT / "bench" / ".aider-venv")
    parser.add_argument("--model", default=os.environ.get("AGENTLS_MODEL", "qwen2.5-coder-1.5b"))
    parser.add_argument("--timeout", type=float, default=900.0, help="seconds per tool per task")
    parser.add_argument("--out", type=Path, help="write per-task rows as JSON here (after every task)")
    parser.add_argument("--every", type=int, default=1, help="only every N-th task of the sorted corpus")
    parser.add_argument("--resume", action="store_true", help="keep the rows already in --out, run the rest")
    parser.add_argument("--aider-rows", type=Path, nargs="*", default=[],
                        help="earlier --out files: reuse their Aider rows (Aider and the endpoint unchanged) and "
                             "run only agentls on those tasks")
    parser.add_argument("--agentls-rows", type=Path, nargs="*", default=[],
                        help="bench/fix_rate.py --out files: take agentls's result for their tasks from there "
                             "(same endpoint and model) and run only Aider on those tasks")
    args = parser.parse_args(argv)
    # `kill` unwinds like Ctrl-C: the running tool is killed and the scratch copies are removed.
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    aider = ensure_aider(args.aider_venv)
    upstream = ensure_endpoint() or os.environ.get("AGENTLS_BASE_URL") or os.environ["OPENAI_BASE_URL"]
    tasks = sorted(p for p in CORPUS.iterdir() if (p / "task.toml").is_file())
    if args.tasks:
        tasks = [t for t in tasks if t.name in set(args.tasks)]
    tasks = tasks[::args.every]
    rows = json.loads(args.out.read_text(encoding="utf-8")) if args.resume and args.out and args.out.exists() else []
    done = {r["task"] for r in rows}
    tasks = [t for t in tasks if t.name not in done]
    earlier = {r["task"]: r["aider"] for f in args.aider_rows for r in json.loads(f.read_text(encoding="utf-8"))
               if not r["aider"].get("reused")}
    from_fix = {r["task"]: from_fix_rate(r)
                for f in args.agentls_rows for r in json.loads(f.read_text(encoding="utf-8"))}
    with TokenProxy(upstream) as proxy, tempfile.TemporaryDirectory(prefix="agentls-vs-aider-") as scratch:
        for n, task in enumerate(tasks, start=1):
            row = compare(task, proxy, aider, args.model, Path(scratch), args.timeout, earlier.get(task.name),
                          from_fix.get(task.name))
            rows.append(row)
            print(f"[{n}/{len(tasks)}] {task.name}: agentls {row['agentls']['fixed']} {row['agentls']['tokens']}t"
                  f" | aider {row['aider']['fixed']} {row['aider']['tokens']}t", file=sys.stderr, flush=True)
            if args.out:
                args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    print(summary(rows))
    return 0


if __name__ == "__main__":
    sys.exit(main())
