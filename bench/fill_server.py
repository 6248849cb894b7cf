"""The model server's settings on the search's fills: the holes of a kept run asked again under two of them.

The search's model reads a new prompt for every hole (its first sample) and
writes a few short answers, so how the server reads prompts and writes answers
decides how many holes a task's time holds. These settings of agent_core/local_model/serve.py are
compared with the product's own (`default`):

- `one-batch-thread`: the prompt read by as many threads as write the answer
  (one core fewer than there are), as before batch_threads;
- `one-at-a-time`: a hole's samples asked one after another, not as many at once
  as the server says it decodes together (local_model/batched_server.py);
- `no-kept`: the bundled server keeping no earlier prompt's cache cells, only
  the last prompt's (local_model/batch_decoder.py `Kept`);
- `build`: the same settings, the server run by another Python (`--python`: its
  llama-cpp-python built another way, as scripts/build-local.sh's flags);
- `cache`: llama-cpp-python's RAM cache of evaluated prompts (`--cache true`)
  beside llama.cpp's own reuse of the last prompt: a hole whose prompt shares
  more with an earlier one than with the last reads only the rest. The
  search's holes come back to a function after a hole elsewhere, so the order
  matters: this asks the holes of real runs in the order they were asked there.

For each task of a history run's JSON (bench/history_fix_rate.py: a row's
`split.holes`, the holes its fills asked, in order), the holes are cut again
from the buggy files (the author's fix reversed; search/infill/holes.py) and
each is filled with `--samples` samples, the failing tests' code in the prompt
as the search gives it, first by a server with the default settings and then
by one with the other (each started fresh from the bundled model; `make demo`
builds it). Nothing of the projects runs, so nothing competes with the
model for the CPU as the search's test runs do. Prints per task and server
the holes, samples and seconds, then the totals and their ratio.

    python -m bench.fill_server --against one-batch-thread \\
        --run bench/results/2026-12-05-history-fix-rate-model-infill-shown-2e3538b.json \\
        --tasks sqlparse/order_nulls_keywords,tomlkit/integer_true_division --samples 3

Fetch the history corpus first (`python -m bench.history_corpus fetch`); run it on an idle machine.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import re
import tempfile
import time
from collections.abc import Iterator, Sequence
from dataclasses import replace
from pathlib import Path

from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.local_model.registry import MODELS, model_dir
from agent_core.local_model.serve import (
    ENV_SERVER_PYTHON,
    PROMPT_CACHE_BYTES,
    ServerConfig,
    default_threads,
    start_server,
)
from agent_core.search import Hole, InfillOptions, failing_tests_code, holes_at, infill_hole, shown
from agent_core.settings import Settings
from bench import history_corpus as hc
from bench.infill_at_author import buggy_source, unknown

ALIAS = "qwen2.5-coder-1.5b"  # the served name: the client picks the FIM tokens by it
SETTINGS: dict[str, dict[str, int]] = {  # the server settings compared with the default ones (`parallel`: the samples
    # of a hole asked at once, the client's side)
    "default": {},
    "one-batch-thread": {"batch_threads": default_threads()},
    "cache": {"cache_bytes": PROMPT_CACHE_BYTES},
    "one-at-a-time": {"parallel": 1},
    "no-kept": {"kept_prompts": 0},
    "build": {},  # `--python`'s llama-cpp-python
}
NEAR = 12  # lines on either side of a label's line where its hole is looked for (a slot after a block names its end)


def hole_named(path: str, source: str, label: str) -> Hole | None:
    """The hole of `source` (the text of `path`) whose label is `label` (`line 12 (shown)`, `slot after line 12`,
    ...): cut at the label's first line number or a line near it, nearest first; None when none is."""
    number = re.search(r"\d+", label)
    if number is None:
        return None
    at = int(number.group())
    for line in sorted(range(max(1, at - NEAR), at + NEAR + 1), key=lambda n: abs(n - at)):
        for hole in holes_at(path, source, line):
            for variant in (hole,) if hole.is_slot or hole.inline else (hole, shown(hole)):
                if variant.label == label:
                    return variant
    return None


def asked_holes(bug: hc.HistoryBug, asked: Sequence[Sequence[str]]) -> tuple[list[tuple[Hole, str]], int]:
    """The holes a run asked for `bug` ((path, label) each), each with its file's buggy text; and how many of them
    could not be cut again."""
    sources: dict[str, str] = {}
    out: list[tuple[Hole, str]] = []
    for path, label in asked:
        if path not in sources:
            sources[path] = buggy_source(bug, path) if path in bug.files else \
                (hc.author_tree(bug) / path).read_text(encoding="utf-8")
        hole = hole_named(path, sources[path], label)
        if hole is not None:
            out.append((hole, sources[path]))
    return out, len(asked) - len(out)


async def ask(base_url: str, tasks: list[tuple[str, list[tuple[Hole, str]], tuple[tuple[str, str], ...]]],
              samples: int, parallel: int | None = None) -> dict[str, dict[str, float]]:
    """Fill every task's holes in order from the server at `base_url`, as many samples at a time as it says it
    writes together (`parallel` in its place): per task, samples answered, candidates kept and seconds."""
    settings = Settings(base_url=base_url, model=ALIAS, request_timeout_s=300.0, llm_deadline_s=3600.0)
    out: dict[str, dict[str, float]] = {}
    for task, holes, tests in tasks:
        async with OpenAIChatClient(settings) as client:  # one a task: its deadline is a task's
            spec = await client.fim_spec("coder")
            spec = replace(spec, parallel=parallel) if parallel is not None else spec
            began, answered, kept = time.monotonic(), 0, 0
            for hole, source in holes:
                report = await infill_hole(client, hole, source, spec, InfillOptions(samples=samples, tests=tests))
                answered, kept = answered + report.answered, kept + report.kept
        out[task] = {"holes": len(holes), "samples": answered, "kept": kept,
                     "seconds": round(time.monotonic() - began, 1)}
        print(f"  {task:45} {json.dumps(out[task])} (load {os.getloadavg()[0]:.2f})", flush=True)
    return out


@contextlib.contextmanager
def _server_python(python: str | None) -> Iterator[None]:
    """The model server started within runs on `python` (serve.server_python), as before when None."""
    before = os.environ.get(ENV_SERVER_PYTHON)
    if python:
        os.environ[ENV_SERVER_PYTHON] = python
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(ENV_SERVER_PYTHON, None)
        else:
            os.environ[ENV_SERVER_PYTHON] = before


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--against", choices=[k for k in SETTINGS if k != "default"], required=True)
    parser.add_argument("--run", required=True, help="a bench/history_fix_rate.py JSON whose rows name their holes")
    parser.add_argument("--tasks", default="", help="comma-separated project/bug names (default: every row with holes)")
    parser.add_argument("--samples", type=int, default=3)
    parser.add_argument("--holes", type=int, default=0, help="the first N holes of each task (default: all)")
    parser.add_argument("--python", help="with --against build: the Python whose llama-cpp-python serves it")
    args = parser.parse_args(argv)
    if (args.against == "build") != bool(args.python):
        parser.error("--python goes with --against build, and --against build needs it")
    try:
        run = json.loads(Path(args.run).read_text(encoding="utf-8"))["rows"]
    except (OSError, ValueError, KeyError, TypeError) as exc:
        raise SystemExit(f"{args.run} is not a bench/history_fix_rate.py run's JSON: {exc!r}") from exc
    rows = {r["task"]: r for r in run if (r.get("split") or {}).get("holes")}
    wanted = args.tasks.split(",") if args.tasks else sorted(rows)
    bugs = {bug.task: bug for bug in hc.load_bugs()}
    unknown(wanted, set(bugs))
    if holeless := sorted(set(wanted) - set(rows)):
        raise SystemExit(f"the run asked no holes for: {', '.join(holeless)} "
                         "(fixed before the fills began, or not in that run)")
    tasks = []
    for name in wanted:
        bug = bugs[name]
        asked = rows[name]["split"]["holes"][: args.holes or None]
        holes, missed = asked_holes(bug, asked)
        if missed:
            print(f"{name}: {missed} of {len(asked)} holes not cut again (the code changed since the run)")
        tasks.append((name, holes, tuple(failing_tests_code(hc.author_tree(bug), bug.failing))))
    model = model_dir() / MODELS[ALIAS].file_name()
    if not model.is_file():
        raise SystemExit(f"the bundled model is not at {model}: `make demo` (or `agentls model fetch`) fetches it")
    figures: dict[str, dict[str, dict[str, float]]] = {}
    compared = ("default", args.against)
    for name in compared:
        options = dict(SETTINGS[name])
        parallel = options.pop("parallel", None)
        config = ServerConfig(model, ALIAS, **options)
        python = args.python if name == "build" else os.environ.get(ENV_SERVER_PYTHON)
        print(f"{name} (threads {config.threads}, batch threads {config.batch_threads}, cache {config.cache_bytes}, "
              f"kept {config.kept_prompts}"
              f"{', python ' + python if python else ''}):", flush=True)
        with tempfile.TemporaryDirectory(prefix="agentls-fill-server-") as state, _server_python(python):
            server = start_server(config, Path(state))
            try:
                figures[name] = asyncio.run(ask(server.base_url, tasks, args.samples, parallel))
            finally:
                server.stop()
    a_name, b_name = compared
    print(f"{'task':45} {'holes':>5} {a_name + ' s':>10} {b_name + ' s':>20} {'ratio':>6}")
    for name, _, _ in tasks:
        a, b = figures[a_name][name], figures[b_name][name]
        ratio = f"{b['seconds'] / a['seconds']:6.2f}" if a["seconds"] else "     -"  # no hole was cut again
        print(f"{name:45} {a['holes']:5.0f} {a['seconds']:10.1f} {b['seconds']:20.1f} {ratio}")
    total = {k: sum(f["seconds"] for f in figures[k].values()) for k in compared}
    samples = {k: sum(f["samples"] for f in figures[k].values()) for k in compared}
    kept = {k: sum(f["kept"] for f in figures[k].values()) for k in compared}

    def said(k: str) -> str:
        rate = f", {60 * kept[k] / total[k]:.1f} a minute" if total[k] else ""
        return f"{k} {total[k]:.1f} s ({samples[k]:.0f} samples, {kept[k]:.0f} candidates{rate})"

    print(f"total: {said(a_name)}, {said(b_name)}, ratio {total[b_name] / total[a_name]:.2f}" if total[a_name] else
          "total: no hole was cut again")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
