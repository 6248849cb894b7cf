"""Aider on the real-project corpus (bench/real_corpus/), set up as bench/real_fix_rate.py sets up agentls.

    .venv/bin/python -m bench.aider_real [--projects NAME ...] [--tasks PROJECT/BUG ...] [--timeout S]
                                         [--edit-format whole] [--out rows.json [--resume]] [--aider-venv DIR]
    .venv/bin/python -m bench.aider_real --table rows.json ...      # the rows as docs/benchmarks.md's table

Each task is a fresh copy of the project's pinned tree with its own `.venv`
and one bug injected (real_projects.prepare_copy + inject, as for agentls).
Aider 0.86 (bench/aider_compare.py's invocation and virtualenv) then gets what
a user would give it:

- the message: the failing output of the project's own suite, run with the
  copy's `.venv` and `--tb=short` (the failures section cut to a budget, then
  pytest's short summary);
- editable: the project's source files the failing tracebacks name, plus the
  module each failing test file is named after (`tests/test_rrule.py` ->
  `rrule.py` or `_rrule.py`), as a user would say "the rrule tests fail"; the
  manifest's bug file is never named otherwise;
- read-only (`--read`): the failing tests' files;
- `--edit-format whole`, `--auto-test` with the project's suite command.

Both talk to the endpoint through bench/support/token_proxy.py (AGENTLS_BASE_URL /
OPENAI_BASE_URL, else the bundled model, as aider_compare.py). A task counts
as fixed only when the project's whole suite passes on the copy afterwards
(real_projects.run_suite, as real_fix_rate.py checks agentls); when Aider
changed no file the suite is not re-run (the injected bug's tests fail, as
`real_corpus.py validate` checked). Not run by the tests.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import re
import shlex
import shutil
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench.aider_compare import aider_argv, ensure_aider, invoke_aider
from bench.fix_rate import ensure_endpoint
from bench.real_fix_rate import select
from bench.support import real_projects as rp
from bench.support.token_proxy import TokenProxy

ROOT = Path(__file__).resolve().parents[1]
_FRAME = re.compile(r"^(\S+\.py):\d+: ", re.MULTILINE)
_SECTION = re.compile(r"^=+ (.+?) =+$", re.MULTILINE)
_INPUT = re.compile(r"Input tokens: ~([\d,]+)")
_SENT = re.compile(r"Tokens: ([\d.]+)(k?) sent")
# Aider's own words for a refused or cut request ("exceeded" alone also appears in a failed fetch's
# "Max retries exceeded", printed on every start without the network).
_OVERFLOW = ("has hit a token limit", "exhausted context window", "contextwindowexceeded", "maximum context length")


def is_test_file(rel: str) -> bool:
    path = Path(rel)
    return (path.name.startswith("test_") or path.name.endswith("_test.py") or path.name == "conftest.py"
            or bool({"tests", "test"} & set(path.parts[:-1])))


def project_sources(tree: Path, import_root: str) -> list[str]:
    """The tree's non-test `.py` files under its import root, relative to the tree."""
    base = tree / import_root
    return sorted(str(p.relative_to(tree)) for p in base.rglob("*.py")
                  if ".venv" not in p.relative_to(tree).parts and not is_test_file(str(p.relative_to(tree))))


def traceback_files(output: str, tree: Path) -> list[str]:
    """The files (relative to `tree`, in order of first mention) of pytest's `path.py:LINE: ` frame lines."""
    seen: dict[str, None] = {}
    for match in _FRAME.finditer(output):
        path = Path(match.group(1))
        rel = path.relative_to(tree) if path.is_absolute() and path.is_relative_to(tree) else path
        if not rel.is_absolute() and (tree / rel).is_file():
            seen.setdefault(str(rel), None)
    return list(seen)


def named_module(test_file: str, sources: list[str]) -> list[str]:
    """The sources a test file is named after: `test_rrule.py` -> `.../rrule.py` or `.../_rrule.py`."""
    stem = Path(test_file).stem.removeprefix("test_").removesuffix("_test")
    return [s for s in sources if Path(s).stem in (stem, f"_{stem}")]


def aider_files(output: str, failing: list[str], tree: Path, import_root: str) -> tuple[list[str], list[str]]:
    """(editable, read-only) for Aider: sources named by the tracebacks or by a failing test file's name;
    the failing tests' files."""
    sources = project_sources(tree, import_root)
    test_files = list(dict.fromkeys(node.split("::", 1)[0] for node in failing))
    named = [f for f in traceback_files(output, tree) if f in sources]
    named += [m for t in test_files for m in named_module(t, sources)]
    return list(dict.fromkeys(named)), [t for t in test_files if (tree / t).is_file()]


def failure_report(output: str, budget: int = 3000, summary_budget: int = 1200) -> str:
    """What a user pastes from a long pytest run: the failures section's head (up to `budget` characters)
    and the short test summary (up to `summary_budget`), without the progress dots."""
    sections = {m.group(1).strip(): m for m in _SECTION.finditer(output)}
    parts = []
    for name in ("FAILURES", "ERRORS"):
        if name in sections:
            start = sections[name].start()
            following = [m.start() for m in _SECTION.finditer(output) if m.start() > start]
            body = output[start:following[0] if following else len(output)]
            parts.append(body if len(body) <= budget else body[:budget] + "\n[... more failures cut ...]\n")
            budget = max(0, budget - len(body))
    summary = sections.get("short test summary info")
    if summary:
        tail = output[summary.start():]
        parts.append(tail if len(tail) <= summary_budget else tail[:summary_budget] + "\n[... cut ...]\n")
    return "".join(parts) or output[-budget:]


def failure_reason(fixed: bool, timed_out: bool, changed: list[str], output: str) -> str:
    """Why a task was not fixed, as far as Aider's output and the tree show it ("" when fixed)."""
    low = output.lower()
    if fixed:
        return ""
    if any(word in low for word in _OVERFLOW):
        return "context overflow"
    if timed_out:
        return "timeout" + (" (after an edit)" if changed else " (no answer from the server)")
    return "wrong edit" if changed else "no edit"


def aider_sent_tokens(output: str) -> int | None:
    """The largest request Aider says it sent, by its own (approximate) count: its token-limit report's
    `Input tokens: ~14,979`, else the largest `Tokens: 15k sent`; None when it sent nothing."""
    exact = [int(m.group(1).replace(",", "")) for m in _INPUT.finditer(output)]
    rough = [round(float(m.group(1)) * (1000 if m.group(2) else 1)) for m in _SENT.finditer(output)]
    return max(exact or rough, default=None)


def snapshot(tree: Path) -> dict[str, str]:
    """SHA-256 of each `.py` file of the tree outside `.venv`."""
    return {str(p.relative_to(tree)): hashlib.sha256(p.read_bytes()).hexdigest() for p in tree.rglob("*.py")
            if ".venv" not in p.relative_to(tree).parts}


def changed_files(before: dict[str, str], after: dict[str, str]) -> list[str]:
    return sorted(k for k in before.keys() | after.keys() if before.get(k) != after.get(k))


def suite_output(project: rp.Project, tree: Path, timeout: float = 600.0) -> tuple[str, list[str]]:
    """The suite's full output with short tracebacks, and the failing node ids."""
    proc = subprocess.run(rp.walled([*rp.suite_argv(project, tree), "--tb=short"], tree), cwd=tree,
                          capture_output=True, text=True, timeout=timeout, env=rp.suite_env(), check=False)
    text = proc.stdout + proc.stderr
    return text, rp.parse_pytest_output(proc.returncode, text, 0.0).failing


def run_task(project: rp.Project, bug: rp.Bug, aider: Path, proxy: TokenProxy, model: str, scratch: Path,
             timeout: float, edit_format: str) -> dict:
    tree = rp.prepare_copy(project, scratch / bug.task.replace("/", "__") / project.slug)
    rp.inject(bug, tree)
    proxy.reset()
    started = time.monotonic()
    output, failing = suite_output(project, tree)
    editable, read_only = aider_files(output, failing, tree, project.import_root)
    message = ("The tests fail. Fix the bug in the code (not the tests) so that they pass.\n\n"
               f"pytest output:\n{failure_report(output)}")
    test_cmd = shlex.join(rp.walled([*rp.suite_argv(project, tree), "--tb=short"], tree))
    before = snapshot(tree)
    aider_started = time.monotonic()
    cmd = aider_argv(aider, proxy.base_url, model, message, editable, read_only, test_cmd, edit_format)
    result = invoke_aider(cmd, tree, rp.suite_env(), timeout)
    aider_s = time.monotonic() - aider_started
    changed = changed_files(before, snapshot(tree))
    fixed = bool(changed) and rp.run_suite(project, tree).green
    wall = time.monotonic() - started
    proxy.wait_idle()  # a request Aider gave up on still runs on the server: its tokens are this task's
    totals = proxy.totals()
    row = {"task": bug.task, "kind": bug.kind, "fixed": fixed, "wall_s": round(wall, 1),
            "aider_s": round(aider_s, 1), "tokens": totals["prompt_tokens"] + totals["completion_tokens"], **totals,
            "exit_code": result["exit_code"], "editable": editable, "read_only": read_only,
            "given_chars": sum((tree / f).stat().st_size for f in editable + read_only) + len(message),
            "aider_sent": aider_sent_tokens(result["output"]), "changed": changed,
            "bug_file_given": bug.file in editable,
            "reason": failure_reason(fixed, result["exit_code"] is None, changed, result["output"]),
            "aider_tail": result["output"][-1500:]}
    shutil.rmtree(tree.parent, ignore_errors=True)  # a copy with its `.venv` is tens of MB; 29 of them add up
    return row


def markdown_table(rows: list[dict]) -> str:
    """The rows as docs/benchmarks.md's table (agentls's column left for its own run) and a totals line."""
    lines = ["| task | Aider | why not fixed | Aider's largest request (its count) | tokens (server) | LLM calls "
             "| wall | agentls |", "| --- | --- | --- | --- | --- | --- | --- | --- |"]
    for r in rows:
        sent = r.get("aider_sent", aider_sent_tokens(r.get("aider_tail", "")))
        lines.append(f"| {r['task']} | {'fixed' if r['fixed'] else 'not fixed'} | {r['reason'] or '-'} "
                     f"| {f'~{sent:,}' if sent else '-'} | {r['tokens']:,} | {r['llm_calls']} "
                     f"| {r['wall_s']:.0f} s | (lead) |")
    fixed = sum(r["fixed"] for r in rows)
    walls = sorted(r["wall_s"] for r in rows)
    lines.append(f"| **total ({len(rows)} tasks)** | **{fixed}/{len(rows)}** | | | "
                 f"**{sum(r['tokens'] for r in rows):,}** | {sum(r['llm_calls'] for r in rows)} "
                 f"| median {walls[len(walls) // 2] if walls else 0:.0f} s | |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", nargs="*", help="only these projects")
    parser.add_argument("--tasks", nargs="*", help="only these PROJECT/BUG tasks")
    parser.add_argument("--aider-venv", type=Path, default=ROOT / "bench" / ".aider-venv")
    parser.add_argument("--model", default=os.environ.get("AGENTLS_MODEL", "qwen2.5-coder-1.5b"))
    parser.add_argument("--timeout", type=float, default=600.0, help="seconds Aider gets per task")
    parser.add_argument("--edit-format", default="whole")
    parser.add_argument("--out", type=Path, help="write the rows as JSON here (after every task)")
    parser.add_argument("--resume", action="store_true", help="keep the rows already in --out, run the rest")
    parser.add_argument("--table", type=Path, nargs="*", help="only print these --out files' rows as a table")
    args = parser.parse_args(argv)
    if args.table:
        print(markdown_table([r for f in args.table for r in json.loads(f.read_text(encoding="utf-8"))]))
        return 0
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    projects = select(rp.load_projects(), args.projects, args.tasks)
    aider = ensure_aider(args.aider_venv)
    upstream = ensure_endpoint() or os.environ.get("AGENTLS_BASE_URL") or os.environ["OPENAI_BASE_URL"]
    rows = json.loads(args.out.read_text(encoding="utf-8")) if args.resume and args.out and args.out.exists() else []
    done = {r["task"] for r in rows}
    todo = [(p, b) for p in projects for b in p.bugs if b.task not in done]
    with TokenProxy(upstream) as proxy, tempfile.TemporaryDirectory(prefix="aider-real-") as scratch:
        for n, (project, bug) in enumerate(todo, start=1):
            row = run_task(project, bug, aider, proxy, args.model, Path(scratch), args.timeout, args.edit_format)
            rows.append(row)
            print(f"[{n}/{len(todo)}] {bug.task}: {'fixed' if row['fixed'] else row['reason']} {row['tokens']}t "
                  f"{row['wall_s']} s", file=sys.stderr, flush=True)
            if args.out:
                args.out.write_text(json.dumps(rows, indent=2), encoding="utf-8")
    fixed = sum(r["fixed"] for r in rows)
    print(f"Aider fixed {fixed}/{len(rows)}, {sum(r['tokens'] for r in rows)} tokens, "
          f"{sum(r['wall_s'] for r in rows):.0f} s")
    return 0


if __name__ == "__main__":
    sys.exit(main())
