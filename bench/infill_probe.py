"""How well the model fills holes cut where a corpus bug is: candidates, passing ones, tokens and seconds.

For each task of bench/corpus/ named, the holes of search/infill/holes.py are
cut at the line its fix.patch changes (the first removed line, or for a fix that
only adds lines, the line after the addition): localization is not measured
here, the generator is. Each hole gets S samples from the endpoint at
`--base-url` (the dialect as agentls decides it, or `--fim`); every candidate
is run against the task's test (pytest, in a temporary copy, on the host: the
corpus is this repository's own code). Prints per hole the samples drawn, the
candidates kept, how many pass, whether one is the author's fix (the same
syntax tree as the fixed module), the tokens and the seconds per sample.

    python -m bench.infill_probe --base-url http://127.0.0.1:PORT/v1 [--samples 10]
        [--tasks merge_sorted_tail,longest_word_wrong_variable,normalise_missing_return]

Start the model's server yourself (docs/local-model.md) and run it on an idle
machine; generation speed drops several times when another process is busy.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.search import INFILL_ACCOUNT, InfillOptions, holes_at, infill_hole
from agent_core.settings import Settings

CORPUS = Path(__file__).resolve().parent / "corpus"
DEFAULT_TASKS = "merge_sorted_tail,longest_word_wrong_variable,normalise_missing_return"
TEST_TIMEOUT_S = 20
_HUNK = re.compile(r"^@@ -(\d+)")


def fix_line(patch: str) -> int:
    """The line of the old file the patch changes first (for an addition only: the line after it)."""
    line = 0
    for text in patch.splitlines():
        hunk = _HUNK.match(text)
        if hunk:
            line = int(hunk.group(1)) - 1
            continue
        if not line or text.startswith(("---", "+++")):
            continue
        if text.startswith("-"):
            return line + 1
        if text.startswith("+"):
            return line + 1
        line += 1
    raise ValueError("the patch changes no line")


def fixed_tree(task: Path, module: str) -> str:
    with tempfile.TemporaryDirectory() as scratch:
        shutil.copy(task / module, scratch)
        subprocess.run(["patch", "-s", "-p1", "-d", scratch, "-i", str(task / "fix.patch")], check=True)
        return ast.dump(ast.parse((Path(scratch) / module).read_text()))


def passes(task: Path, module: str, source: str) -> bool:
    with tempfile.TemporaryDirectory() as scratch:
        for item in task.iterdir():
            if item.suffix == ".py":
                shutil.copy(item, scratch)
        (Path(scratch) / module).write_text(source)
        try:
            run = subprocess.run([sys.executable, "-m", "pytest", "-q", "-x", "-p", "no:cacheprovider"],
                                 cwd=scratch, capture_output=True, timeout=TEST_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            return False  # a candidate that loops
        return run.returncode == 0


async def probe(task_name: str, client: OpenAIChatClient, options: InfillOptions) -> list[str]:
    task = CORPUS / task_name
    module = next(line.split('"')[1] for line in (task / "task.toml").read_text().splitlines()
                  if line.startswith("module"))
    source = (task / module).read_text()
    line = fix_line((task / "fix.patch").read_text())
    right = fixed_tree(task, module)
    spec = await client.fim_spec("coder")
    rows = []
    for hole in holes_at(module, source, line):
        report = await infill_hole(client, hole, source, spec, options)
        green = [m for m in report.mutants if passes(task, module, m.applied(source))]
        author = [m for m in report.mutants if ast.dump(ast.parse(m.applied(source))) == right]
        per = report.seconds / max(1, report.answered)
        tokens = report.tokens / max(1, report.answered)
        rows.append(f"{task_name:30} {hole.label:28} {spec.dialect:6} drawn {report.drawn:2} kept {report.kept:2} "
                    f"green {len(green):2} author {'yes' if author else 'no ':3} {tokens:6.1f} tok/sample "
                    f"{per:5.1f} s/sample{'  ' + report.error if report.error else ''}")
        for mutant in green[:3]:
            rows.append(f"{'':30}   green: {mutant.description}")
    return rows


async def main_async(args: argparse.Namespace) -> int:
    settings = Settings(base_url=args.base_url, model=args.model, fim=args.fim, request_timeout_s=300.0,
                        llm_deadline_s=600.0)
    options = InfillOptions(samples=args.samples, failure=None)
    async with OpenAIChatClient(settings) as client:
        began = time.monotonic()
        for name in args.tasks.split(","):
            for row in await probe(name, client, options):
                print(row, flush=True)
        usage = client.usage_by_role().get(INFILL_ACCOUNT)
        print(f"total: {usage.tokens if usage else 0} tokens in {usage.llm_calls if usage else 0} calls, "
              f"{time.monotonic() - began:.0f} s")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--base-url", required=True)
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    parser.add_argument("--fim", default="auto", choices=["auto", "tokens", "suffix", "chat"])
    parser.add_argument("--samples", type=int, default=10)
    parser.add_argument("--tasks", default=DEFAULT_TASKS)
    return asyncio.run(main_async(parser.parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
