"""Mutation score of generated tests on real open-source modules (bench/real_corpus/ projects).

    .venv/bin/python -m bench.real_corpus fetch       # once: the pinned sdists into ~/.cache/agentls-bench
    .venv/bin/python -m bench.mutation_score [--base-url URL] [--model M] [--only NAME ...]
        [--with-project-tests] [--no-model] [--out rows.json] [--journals DIR]
    .venv/bin/python -m bench.mutation_score --table rows.json   # the table of saved rows, nothing run

Each row is one module of a pinned project tree (more-itertools, boltons,
toolz, python-dateutil) and one function in it, in a fresh copy with the
project's own `.venv` (bench/support/real_projects.py). With a model (`--base-url`, else
AGENTLS_BASE_URL; an unreachable endpoint stops the script), `agentls
gen-tests` runs on the function exactly as `run_gen_tests` does for a user;
the row records coverage and mutation score (killed / mutants of the
function, our catalogue) before and after, the tests written and kept, the
tokens and the wall time.

By default the project's test files that mention the module are deleted from
the copy first: the module stands as an untested one, and "before" is what
the remaining tests do. `--with-project-tests` keeps them (before is then the
project's own suite, usually strong). `--no-model` runs no model at all: it
measures, with the same sandboxed mutation run, the score of the project's
own tests on each function (a check of the machinery and of the catalogue on
real suites).
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shutil
import sys
import tempfile
import time
from pathlib import Path
from types import SimpleNamespace

from agent_core.events import NullHooks
from agent_core.gentests.driver import run_driver
from agent_core.gentests.mutation import covered_lines, run_mutants, select_mutants, statement_lines
from agent_core.gentests.run import _baseline_files, run_gen_tests
from agent_core.gentests.targets import select_targets
from agent_core.journal.writer import Journal
from agent_core.models import RunRequest, RunResult
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import Settings
from agent_core.workspace.shadow import ShadowWorkspace
from bench.support import real_projects as rp

# (project, module file, function): small functions with real logic, 12 modules of 4 projects.
MODULES = [
    ("toolz", "toolz/itertoolz.py", "partition_all"),
    ("toolz", "toolz/dicttoolz.py", "get_in"),
    ("toolz", "toolz/recipes.py", "partitionby"),
    ("more-itertools", "more_itertools/recipes.py", "grouper"),
    ("more-itertools", "more_itertools/more.py", "windowed"),
    ("boltons", "boltons/mathutils.py", "clamp"),
    ("boltons", "boltons/strutils.py", "bytes2human"),
    ("boltons", "boltons/iterutils.py", "backoff_iter"),
    ("boltons", "boltons/timeutils.py", "relative_time"),
    ("boltons", "boltons/dictutils.py", "subdict"),
    ("python-dateutil", "src/dateutil/easter.py", "easter"),
    ("python-dateutil", "src/dateutil/utils.py", "within_delta"),
]


def _score(killed: int, mutants: int) -> float:
    return round(100.0 * killed / mutants, 1) if mutants else 0.0


async def own_tests_row(copy: Path, module: str, function: str, settings: Settings) -> dict:
    """The project's own tests against the function's mutants (no model)."""
    started = time.monotonic()
    request = RunRequest(kind="gen_tests", workspace=copy, target_file=module, target_symbol=function)
    with ShadowWorkspace(copy) as shadow:
        root = shadow.root
        targets, _, dotted = select_targets(request, root)
        files = _baseline_files(root, dotted)
        sandbox = make_sandbox(settings.sandbox)
        cov = await run_driver(sandbox, root, files, module, coverage=True, timeout_s=settings.sandbox.timeout_s)
        coverage = cov.runs[0].coverage if cov.runs else None
        source = (root / module).read_text(encoding="utf-8")
        span = [(t.symbol.start_line, t.symbol.end_line) for t in targets]
        mutants = select_mutants(module, source, statement_lines(source, span), settings.mutation.max_mutants)
        run = await run_mutants(
            sandbox,
            root,
            files,
            mutants,
            source,
            covered=covered_lines(coverage),
            mutant_timeout_s=settings.mutation.mutant_timeout_s,
            budget_s=settings.mutation.budget_s,
        )
    killed = sum(bool(o.killers) for o in run.outcomes) if run else 0
    return {
        "test_files": len(files),
        "mutants": len(run.outcomes) if run else len(mutants),
        "killed_before": killed,
        "killed_after": killed,
        "not_run": sum(not o.ran for o in run.outcomes) if run else 0,
        "driver_failed": run is None,
        "coverage_before": coverage.percent() if coverage else 0.0,
        "wall_s": round(time.monotonic() - started, 1),
    }


async def gen_tests_row(copy: Path, module: str, function: str, settings: Settings, keep_tests: bool,
                        journals: Path | None = None) -> dict:
    """`gen-tests` on the function, the figures from its result; its journal copied into `journals`."""
    if not keep_tests:
        request = RunRequest(kind="gen_tests", workspace=copy, target_file=module, target_symbol=function)
        _, _, dotted = select_targets(request, copy)
        for rel in _baseline_files(copy, dotted):
            (copy / rel).unlink()
    request = RunRequest(kind="gen_tests", workspace=copy, target_file=module, target_symbol=function)
    started = time.monotonic()
    journal = Journal(copy, f"mutation-{function}", enabled=journals is not None)
    try:
        result = await run_gen_tests(request, settings, NullHooks(), SimpleNamespace(journal=journal))
    except Exception as exc:  # noqa: BLE001 - a model error ends this row, as the engine ends the run; the rest go on
        result = RunResult(run_id=f"mutation-{function}", kind="gen_tests", status="error", error=str(exc))
    if journals is not None and journal.dir.is_dir():
        shutil.copytree(journal.dir, journals / function, dirs_exist_ok=True)
    extra = result.gen_tests.model_dump() if result.gen_tests else {}  # the run's counts and findings
    mutation = extra.get("mutation") or {}
    return {
        "status": result.status,
        "error": result.error,
        "tests_written": extra.get("tests_written", 0),
        "tests_kept": extra.get("tests_kept", 0),
        "suspected_bugs": len(extra.get("suspected_bugs", [])),  # kept as failing tests: they kill no mutant
        "mutants": mutation.get("mutants", 0),
        "killed_before": mutation.get("killed_before", 0),
        "killed_after": mutation.get("killed_after", 0),
        "coverage_before": extra.get("coverage", {}).get("before", 0.0),
        "coverage_after": extra.get("coverage", {}).get("after", 0.0),
        "tokens": result.usage.prompt_tokens + result.usage.completion_tokens,
        "llm_calls": result.usage.llm_calls,
        "wall_s": round(time.monotonic() - started, 1),
    }


def _table(rows: list[dict], no_model: bool) -> str:
    head = (
        (
            "| module | function | mutants | killed (own tests) | score | coverage | wall s |\n"
            "| --- | --- | ---: | ---: | ---: | ---: | ---: |"
        )
        if no_model
        else (
            "| module | function | mutants | score before | score after | coverage before -> after "
            "| kept (suspected bugs) / written "
            "| tokens | wall s |\n| --- | --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
        )
    )
    lines = [head]
    for r in rows:
        before, after = _score(r["killed_before"], r["mutants"]), _score(r["killed_after"], r["mutants"])
        if no_model:
            lines.append(
                f"| {r['module']} | {r['function']} | {r['mutants']} | {r['killed_before']} | {before} | "
                f"{r['coverage_before']} | {r['wall_s']} |"
            )
        else:
            lines.append(
                f"| {r['module']} | {r['function']} | {r['mutants']} | {before} | {after} | "
                f"{r['coverage_before']} -> {r['coverage_after']} | {r['tests_kept']} ({r.get('suspected_bugs', '?')}) "
                f"/ {r['tests_written']} "
                f"| {r['tokens']} | {r['wall_s']} |"
            )
    if rows and not no_model:
        gain = sum(
            _score(r["killed_after"], r["mutants"]) - _score(r["killed_before"], r["mutants"]) for r in rows
        ) / len(rows)
        lines.append(f"\nmean mutation score gain: {gain:.1f} points over {len(rows)} modules")
    return "\n".join(lines)


async def main_async(args: argparse.Namespace) -> list[dict]:
    base_url = args.base_url or os.environ.get("AGENTLS_BASE_URL")
    if not args.no_model and not base_url:
        raise SystemExit("no model: pass --base-url or set AGENTLS_BASE_URL (or run with --no-model)")
    # a small local model on a shared machine: generous deadlines, so a slow answer is measured, not lost
    settings = Settings(
        base_url=base_url,
        model=args.model or "qwen2.5-coder-1.5b",
        journal=False,
        request_timeout_s=600,
        llm_deadline_s=900,
        llm_answer_cap_s=1800,
    )
    projects = {p.name: p for p in rp.load_projects()}
    rows = []
    for name, module, function in MODULES:
        if args.only and name not in args.only and function not in args.only:
            continue
        with tempfile.TemporaryDirectory(prefix="agentls-mutation-") as tmp:
            copy = rp.prepare_copy(projects[name], Path(tmp) / name)
            if args.no_model:
                row = await own_tests_row(copy, module, function, settings)
            else:
                journals = Path(args.journals).resolve() if args.journals else None
                row = await gen_tests_row(copy, module, function, settings, args.with_project_tests, journals)
        row = {"project": name, "module": module, "function": function, **row}
        print(json.dumps(row), flush=True)
        rows.append(row)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", help="OpenAI-compatible endpoint (default: AGENTLS_BASE_URL)")
    parser.add_argument("--model", help="model name sent to the endpoint")
    parser.add_argument("--only", nargs="*", help="project names or function names")
    parser.add_argument("--with-project-tests", action="store_true", help="keep the project's tests of the module")
    parser.add_argument("--no-model", action="store_true", help="only the project's own tests' mutation score")
    parser.add_argument("--out", help="write the rows as JSON here")
    parser.add_argument("--journals", help="keep each run's journal (generated tests, survivors) under this folder")
    parser.add_argument("--table", help="print the table of rows saved by --out (runs nothing)")
    args = parser.parse_args(argv)
    if args.table:
        rows = json.loads(Path(args.table).read_text())
        print(_table(rows, all("tokens" not in r for r in rows)))
        return 0
    rows = asyncio.run(main_async(args))
    if args.out:
        Path(args.out).write_text(json.dumps(rows, indent=1))
    print(_table(rows, args.no_model))
    return 0


if __name__ == "__main__":
    sys.exit(main())
