"""`agentls trace [RUN_ID] [PATH]` and `agentls runs [PATH]`: read back what runs did.

`trace` renders one run's journal (the latest run by default) as terminal
text, or as Markdown with --markdown (what the editor's Show trace shows);
`runs` lists recent runs with status, duration and tokens. With --json both
print one JSON document instead (`runs`: a list of summaries; `trace`: the
summary, run records and timeline; an error: `{"error": ...}`). Exit code 2
for an unknown run id or a workspace without runs.
"""

from __future__ import annotations

import argparse
import sys

from agent_core.cli import EXIT_BAD_INPUT, EXIT_OK, jsonout
from agent_core.cli.options import add_path, add_run_and_path, project_path, run_and_path
from agent_core.errors import UnknownRun
from agent_core.journal.render import render_markdown, render_text
from agent_core.journal.trace import RunSummary, list_runs, load_trace, summary_json, trace_json

GOAL_WIDTH = 50


def register(subparsers: argparse._SubParsersAction) -> None:
    t = subparsers.add_parser("trace", help="show a run's journal: nodes, model calls, tools, tests, result")
    add_run_and_path(t)
    form = t.add_mutually_exclusive_group()
    form.add_argument("--markdown", action="store_true", help="print Markdown instead of terminal text")
    form.add_argument("--json", action="store_true", help="print the trace as one JSON document")
    t.set_defaults(func=trace)
    r = subparsers.add_parser("runs", help="list recent runs with status, duration and tokens")
    add_path(r)
    r.add_argument("--limit", type=int, default=20, metavar="N", help="how many runs to list (default 20)")
    r.add_argument("--json", action="store_true", help="print a JSON list of run summaries")
    r.set_defaults(func=runs)


def trace(args: argparse.Namespace) -> int:
    run_id, workspace = run_and_path(args)
    try:
        if args.json:
            text = jsonout.dumps(trace_json(load_trace(workspace, run_id))) + "\n"
        else:
            text = (render_markdown if args.markdown else render_text)(workspace, run_id)
    except UnknownRun as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        if args.json:
            print(jsonout.dumps({"error": str(exc)}))
        return EXIT_BAD_INPUT
    sys.stdout.write(text)
    return EXIT_OK


def runs(args: argparse.Namespace) -> int:
    if args.limit < 1:
        print("agentls: --limit must be at least 1", file=sys.stderr)
        if args.json:
            print(jsonout.dumps({"error": "--limit must be at least 1"}))
        return EXIT_BAD_INPUT
    found = list_runs(project_path(args), args.limit)
    if args.json:
        print(jsonout.dumps([summary_json(s) for s in found]))
        return EXIT_OK
    if not found:
        print(f"agentls: no runs recorded in {project_path(args) / '.agentls' / 'runs'}", file=sys.stderr)
        return EXIT_OK
    print(f"{'RUN ID':<22} {'STATUS':<12} {'KIND':<9} {'STARTED':<19} {'DURATION':>9} {'TOKENS':>8}  GOAL")
    for s in found:
        print(_row(s))
    return EXIT_OK


def _row(s: RunSummary) -> str:
    goal = " ".join(s.goal.split()) or "-"
    if len(goal) > GOAL_WIDTH:
        goal = goal[: GOAL_WIDTH - 3] + "..."
    return (f"{s.run_id:<22} {s.status:<12} {s.kind:<9} {s.started_text:<19} {s.duration_s:>8.1f}s "
            f"{s.tokens:>8}  {goal}")
