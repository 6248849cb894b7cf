"""`agentls resume RUN_ID [PATH]`: continue an interrupted fix/task run from its last checkpoint.

The run's request and settings come from its journal's run_start record
(the API key again from the environment); --base-url / --model may point
the rest of the run at another endpoint, and `--set KEY=VALUE` change a
setting. Nodes that finished before the interruption are not run again. The output is that of `agentls fix`: the
diff (or --json), --apply, and the same exit codes.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agent_core.cli.fix import _fail, add_run_options, execute
from agent_core.cli.options import overrides
from agent_core.errors import ResumeError
from agent_core.models import RunRequest
from agent_core.pipeline.checkpoint import resumable_run
from agent_core.settings import SettingsError, load_settings
from agent_core.settings.sources import deep_merge


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("resume", help="continue an interrupted fix or task run from its last checkpoint")
    p.add_argument("run_id", metavar="RUN_ID", help="the run to continue (see `agentls runs`)")
    p.add_argument("path", metavar="PATH", nargs="?", default=".", help="the project directory (default: .)")
    add_run_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    workspace = Path(args.path).expanduser()
    if not workspace.is_dir():
        return _fail(args, f"{args.path} is not a directory")
    workspace = workspace.resolve()
    try:
        start = resumable_run(workspace, args.run_id)
        given = deep_merge(dict(start.get("settings") or {}), overrides(args, base_url=args.base_url, model=args.model))
        settings = load_settings(workspace, given)
    except (ResumeError, SettingsError) as exc:
        return _fail(args, str(exc))
    request = RunRequest.model_validate({**start["request"], "workspace": str(workspace), "run_id": args.run_id})
    return execute(args, settings, request, resume=True)
