"""Journal size per run: bytes written under .agentls/runs/<run_id>/ for a few scripted runs.

Runs `agentls fix` (the real CLI, the real sandbox) against the scripted
OpenAI-compatible server on a small buggy project in three shapes: fixed at
the first attempt, fixed after a failed attempt and a reflection, and
unfixed after a replan. Each shape runs --repeat times; prints the journal's
bytes (journal.jsonl and the whole run directory) per run, then the median
and maximum over all runs.

    python -m bench.journal_size [--repeat 2]
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import statistics
import tempfile
from pathlib import Path

from agent_core.cli import main
from testkit.runs_support import (
    BUGGY_CALC,
    FIX_AFTER_WRONG,
    FIX_EDIT,
    PLAN,
    REFLECTION,
    WRONG_EDIT,
    make_project,
)
from testkit.scripted_llm import ScriptedLLM


def _one_shot(llm: ScriptedLLM) -> list[str]:
    llm.add("coder", FIX_EDIT)
    return []


def _reflected(llm: ScriptedLLM) -> list[str]:
    llm.add("coder", WRONG_EDIT)
    llm.add("reflector", REFLECTION)
    llm.add("coder", FIX_AFTER_WRONG)
    return []


def _replanned(llm: ScriptedLLM) -> list[str]:
    llm.add("planner", PLAN)
    llm.default("planner", PLAN)
    llm.default("coder", WRONG_EDIT)
    llm.default("reflector", REFLECTION)
    return ["--goal", "make add add", "--max-iterations", "3"]


SHAPES = {"fixed at once": _one_shot, "fixed after a reflection": _reflected, "unfixed after a replan": _replanned}


def measure(shape: str, root: Path) -> tuple[int, int, int]:
    """Run one shape; return (journal.jsonl bytes, run directory bytes, LLM calls)."""
    project = make_project(root, BUGGY_CALC)
    with ScriptedLLM() as llm:
        extra = SHAPES[shape](llm)
        out = io.StringIO()
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
            main(["fix", str(project), "--base-url", llm.base_url, "--json", *extra])
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    run_dir = project / ".agentls" / "runs" / result["run_id"]
    total = sum(p.stat().st_size for p in run_dir.iterdir() if p.is_file())
    return (run_dir / "journal.jsonl").stat().st_size, total, result["usage"]["llm_calls"]


def main_bench() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=2, help="runs per shape (default 2)")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        os.environ["XDG_CACHE_HOME"] = str(Path(tmp) / "cache")
        os.environ.pop("AGENTLS_BASE_URL", None)
        journals, totals = [], []
        print(f"{'shape':<26} {'calls':>5} {'journal.jsonl':>14} {'run dir':>10}")
        for shape in SHAPES:
            for _ in range(args.repeat):
                journal, total, calls = measure(shape, Path(tmp) / f"{len(journals)}" / "proj")
                journals.append(journal)
                totals.append(total)
                print(f"{shape:<26} {calls:>5} {journal:>12} B {total:>8} B")
        print(f"journal.jsonl per run: median {statistics.median(journals):.0f} B, max {max(journals)} B "
              f"({len(journals)} runs)")
        print(f"run directory per run: median {statistics.median(totals):.0f} B, max {max(totals)} B")


if __name__ == "__main__":
    main_bench()
