"""The line's hole with and without its old text shown: which way the model writes the right line more often.

A line's own hole (search/infill/holes.py, kind `line`) hides the line it
replaces: the model writes what the code around it suggests, and at a bug that
is often the buggy line again. AlphaRepair (Xia and Zhang, ESEC/FSE 2022) shows
the buggy line as a comment just above its mask. This probe asks both on the
29 single-line bugs of bench/real_corpus/ (real projects' modules, the bug's
line known): at the bug's line, the `line` hole and the same hole with the old
line shown (`shown`), `--samples` samples each from the bundled model's server
(`agentls model serve`, its address read from the server's record) or
`--base-url`, the failing tests' code in the prompt as the search gives it.
Nothing of the projects runs: a candidate is right when the file it makes has
the original file's syntax tree. Prints per bug and hole the samples answered,
the candidates, the samples that wrote the buggy line back, whether one is
right, the seconds; then the totals per kind.

    python -m bench.infill_shown [--samples 8] [--tasks boltons/..,toolz/..]

Fetch the corpus first (`python -m bench.real_corpus fetch`); run it on an idle machine.
"""

from __future__ import annotations

import argparse
import ast
import asyncio
import json
import time
from pathlib import Path

from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.search import InfillOptions, failing_tests_code, holes_at, infill_hole
from bench.infill_at_author import probe_parser, probe_settings, totals, unknown
from bench.support import real_projects as rp

KINDS = ("line", "shown")


def _tree(source: str) -> str:
    return ast.dump(ast.parse(source))


async def probe(client: OpenAIChatClient, bug: rp.Bug, tree: Path, samples: int) -> list[dict]:
    pristine = (tree / bug.file).read_text(encoding="utf-8")
    lines = pristine.split("\n")
    lines[bug.line - 1] = bug.buggy
    source = "\n".join(lines)
    right = _tree(pristine)
    spec = await client.fim_spec("coder")
    options = InfillOptions(samples=samples, tests=tuple(failing_tests_code(tree, bug.failing)))
    rows = []
    for hole in [h for h in holes_at(bug.file, source, bug.line) if h.kind in KINDS]:
        began = time.monotonic()
        report = await infill_hole(client, hole, source, spec, options)
        hits = [m for m in report.mutants if _tree(m.applied(source)) == right]
        rows.append({"task": bug.task, "kind": hole.kind, "answered": report.answered, "kept": report.kept,
                     "unchanged": report.unchanged, "right": bool(hits),
                     "rank": report.mutants.index(hits[0]) + 1 if hits else None, "tokens": report.tokens,
                     "seconds": round(time.monotonic() - began, 1)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


async def main_async(args: argparse.Namespace) -> int:
    settings = probe_settings(args)
    wanted = set(args.tasks.split(",")) if args.tasks else None
    cache = rp.cache_dir()
    projects = rp.load_projects()
    if wanted is not None:
        unknown(wanted, {bug.task for project in projects for bug in project.bugs})
    rows: list[dict] = []
    async with OpenAIChatClient(settings) as client:
        for project in projects:
            tree = rp.pristine_tree(project, cache)
            for bug in project.bugs:
                if wanted is None or bug.task in wanted:
                    rows += await probe(client, bug, tree, args.samples)
    for kind in KINDS:
        own = [r for r in rows if r["kind"] == kind]
        print(f"{kind}: {totals(own)}; {sum(r['right'] for r in own)} with a right candidate")
    return 0


def main(argv: list[str] | None = None) -> int:
    return asyncio.run(main_async(probe_parser(__doc__, "bench/real_corpus", samples=8).parse_args(argv)))


if __name__ == "__main__":
    raise SystemExit(main())
