"""The model's fills at the authors' own lines of the real-history bugs: what a hole's prompt costs.

For each named bug of bench/history_corpus/, the buggy file is rebuilt from the
author's tree (the fix reversed), the holes of search/infill/holes.py are cut at
the first line the author's fix touches (localization is not measured here),
and the first HOLES of them are filled with `--samples` samples each from the
bundled model's server (`agentls model serve`; its address is read from the
server's record) or `--base-url`, the failing tests' code in the prompt as the
search gives it. Nothing of the projects runs: a sample is not tested, only
compared with the author's added lines. Prints per hole the samples answered,
the candidates kept, the samples that wrote the hole back as it was, how many
wrote one of the author's added lines, the tokens and seconds, then the totals.

Compare two versions of the hole cutting by running it from a git worktree of
the other version (`python -m` puts the current directory first on the path;
the first line printed says which code ran):

    python -m bench.infill_at_author --tasks jinja2/required_block_check,click/group_command_class_without_parens
    python -m bench.infill_at_author --tasks ... --kinds statement,block --shown   # hidden against shown

Fetch the corpus first (`python -m bench.history_corpus fetch`); run it on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import shutil
import subprocess
import tempfile
import time
from pathlib import Path

import agent_core
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.search import Hole, InfillOptions, failing_tests_code, holes_at, infill_hole, shown
from agent_core.settings import Settings
from bench import history_corpus as hc
from bench.history_fix_rate import author_lines

HOLES = 3  # the line's own hole, then the next two holes_at cuts there


def buggy_source(bug: hc.HistoryBug, rel: str) -> str:
    """`rel` as it was before the author's fix (the fix reversed on a copy of the fixed files)."""
    tree = hc.author_tree(bug)
    with tempfile.TemporaryDirectory() as scratch:
        for name in bug.files:
            (Path(scratch) / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy(tree / name, Path(scratch) / name)
        subprocess.run(["patch", "-p1", "-R", "--silent", "-d", scratch], input=bug.fix, text=True, check=True,
                       timeout=60)
        return (Path(scratch) / rel).read_text(encoding="utf-8")


def added_lines(bug: hc.HistoryBug) -> set[str]:
    return {line[1:].strip() for line in bug.fix.splitlines()
            if line.startswith("+") and not line.startswith("+++") and line[1:].strip()}


def chosen(holes: list[Hole], kinds: str, show: bool) -> list[Hole]:
    """The holes asked: the first HOLES, or those of `kinds` (comma-separated); with `show`, each replaced hole
    followed by the same hole with its old text shown above it (holes.py `shown`)."""
    out = [h for h in holes if h.kind in kinds.split(",")] if kinds else holes[:HOLES]
    return [v for h in out for v in ([h, shown(h)] if show and not (h.is_slot or h.inline or h.kind == "shown")
                                     else [h])]


async def probe(client: OpenAIChatClient, bug: hc.HistoryBug, samples: int, kinds: str = "",
                show: bool = False) -> list[dict]:
    places = author_lines(bug)
    rel = next(iter(places))
    source = buggy_source(bug, rel)
    added = added_lines(bug)
    spec = await client.fim_spec("coder")
    options = InfillOptions(samples=samples, tests=tuple(failing_tests_code(hc.author_tree(bug), bug.failing)))
    rows = []
    for hole in chosen(holes_at(rel, source, min(places[rel])), kinds, show):
        began = time.monotonic()
        report = await infill_hole(client, hole, source, spec, options)
        hits = sum(any(line.strip() in added for line in m.text.split("\n")) for m in report.mutants)
        rows.append({"task": bug.task, "hole": hole.label, "answered": report.answered, "kept": report.kept,
                     "unchanged": report.unchanged, "hits": hits, "tokens": report.tokens,
                     "seconds": round(time.monotonic() - began, 1)})
        print(json.dumps(rows[-1]), flush=True)
    return rows


def base_url(given: str | None) -> str:
    if given:
        return given
    record = json.loads((Path.home() / ".cache" / "agentls" / "models" / "server.json").read_text())
    return str(record["base_url"])


def unknown(wanted: list[str] | set[str], found: set[str]) -> None:
    """Stop with a clear error when a task asked for is not in the corpus (nothing would be probed for it)."""
    if missing := sorted(set(wanted) - found):
        raise SystemExit(f"no such task in the corpus: {', '.join(missing)}")


def probe_settings(args: argparse.Namespace) -> Settings:
    """A probe's client settings: the endpoint and model named by `probe_parser`'s options, room for slow calls."""
    return Settings(base_url=base_url(args.base_url), model=args.model, request_timeout_s=300.0, llm_deadline_s=3600.0)


def probe_parser(doc: str, tasks: str, samples: int) -> argparse.ArgumentParser:
    """The options a model probe of the bench takes: `--tasks` (`tasks` says of which corpus), `--samples`, the
    endpoint and the model."""
    parser = argparse.ArgumentParser(description=doc.split("\n")[0])
    parser.add_argument("--tasks", default="", help=f"comma-separated project/bug names of {tasks}")
    parser.add_argument("--samples", type=int, default=samples)
    parser.add_argument("--base-url", default=None, help="default: the bundled model's running server")
    parser.add_argument("--model", default="qwen2.5-coder-1.5b")
    return parser


async def main_async(args: argparse.Namespace) -> int:
    print(f"code: {Path(agent_core.__file__).parent}", flush=True)
    settings = probe_settings(args)
    wanted = args.tasks.split(",")
    bugs = [bug for bug in hc.load_bugs() if bug.task in wanted]
    unknown(wanted, {bug.task for bug in bugs})
    rows: list[dict] = []
    async with OpenAIChatClient(settings) as client:
        for bug in bugs:
            rows += await probe(client, bug, args.samples, args.kinds, args.shown)
    print(f"total: {totals(rows)}; {sum(r['hits'] for r in rows)} writing an author's line "
          f"({sum(r['hits'] > 0 for r in rows)} holes)")
    return 0


def totals(rows: list[dict]) -> str:
    """What a probe's rows (one per hole) add up to: holes, samples, candidates, answers that wrote the hole back,
    seconds, tokens."""
    answered, tokens = sum(r["answered"] for r in rows), sum(r["tokens"] for r in rows)
    return (f"{len(rows)} holes, {answered} samples, {sum(r['kept'] for r in rows)} kept, "
            f"{sum(r['unchanged'] for r in rows)} writing their hole back as it was, "
            f"{sum(r['seconds'] for r in rows):.0f} s, {tokens} tokens ({tokens / max(answered, 1):.0f} a sample)")


def main(argv: list[str] | None = None) -> int:
    parser = probe_parser(__doc__, "bench/history_corpus", samples=5)
    parser.add_argument("--kinds", default="", help="the hole kinds asked (comma-separated); default: the first 3")
    parser.add_argument("--shown", action="store_true", help="each replaced hole also with its old text shown")
    args = parser.parse_args(argv)
    if not args.tasks:
        parser.error("--tasks is required")
    return asyncio.run(main_async(args))


if __name__ == "__main__":
    raise SystemExit(main())
