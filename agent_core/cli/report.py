"""`agentls report [RUN_ID] [PATH] [--html FILE]`: write a run's self-contained HTML report.

The latest run by default; the page goes to FILE, or to report.html in the
run's directory. Prints the path written (or `{"run_id", "path"}` with
--json). Exit code 2 for an unknown run id or a workspace without runs.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_core.cli import EXIT_BAD_INPUT, EXIT_OK, jsonout
from agent_core.cli.options import add_run_and_path, run_and_path
from agent_core.errors import UnknownRun
from agent_core.report import write_report


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("report", help="write a run's HTML report: graph path, timeline, prompts, diffs, tests")
    add_run_and_path(p)
    p.add_argument("--html", metavar="FILE", help="where to write the page (default: report.html in the run's folder)")
    p.add_argument("--json", action="store_true", help='print {"run_id", "path"} instead of the path')
    p.set_defaults(func=report)


def report(args: argparse.Namespace) -> int:
    asked, workspace = run_and_path(args)
    try:
        run_id, path = write_report(workspace, asked,
                                    Path(args.html).expanduser() if args.html else None)
    except UnknownRun as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        if args.json:
            print(jsonout.dumps({"error": str(exc)}))
        return EXIT_BAD_INPUT
    if args.json:
        print(jsonout.dumps({"run_id": run_id, "path": str(path)}))
    else:
        print(path)
    return EXIT_OK

