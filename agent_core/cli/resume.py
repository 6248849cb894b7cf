"""`agentls resume RUN_ID [PATH]`: continue an interrupted fix/task run from its last checkpoint.

The run's request and settings come from its journal's run_start record
(the API key again from the environment); --base-url / --model may point
the rest of the run at another endpoint. Nodes that finished before the
interruption are not run again. The output is that of `agentls fix`: the
diff (or --json), --apply, and the same exit codes.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from agent_core.changeset import ChangeSetConflict, apply_change_set
from agent_core.cli.fix import _fail, _report
from agent_core.cli.progress import TerminalHooks
from agent_core.engine import Engine
from agent_core.models import RunRequest
from agent_core.pipeline.checkpoint import ResumeError, resumable_run
from agent_core.settings import SettingsError, load_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("resume", help="continue an interrupted fix or task run from its last checkpoint")
    p.add_argument("run_id", metavar="RUN_ID", help="the run to continue (see `agentls runs`)")
    p.add_argument("path", metavar="PATH", nargs="?", default=".", help="the project directory (default: .)")
    p.add_argument("--base-url", dest="base_url", help="OpenAI-compatible endpoint for the rest of the run")
    p.add_argument("--model", help="model name for the rest of the run")
    p.add_argument("--apply", action="store_true", help="write the verified change to PATH")
    p.add_argument("--allow-unsafe", dest="allow_unsafe", action="store_true",
                   help="test and apply changes the safety gate flags")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last stdout line")
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    workspace = Path(args.path).expanduser()
    if not workspace.is_dir():
        return _fail(args, f"{args.path} is not a directory")
    workspace = workspace.resolve()
    try:
        start = resumable_run(workspace, args.run_id)
        overrides = dict(start.get("settings") or {})
        overrides.update({k: v for k, v in (("base_url", args.base_url), ("model", args.model)) if v})
        settings = load_settings(workspace, overrides)
    except (ResumeError, SettingsError) as exc:
        return _fail(args, str(exc))
    request = RunRequest.model_validate({**start["request"], "workspace": str(workspace), "run_id": args.run_id})
    hooks = TerminalHooks(sys.stderr, allow_unsafe=args.allow_unsafe)
    try:
        result = asyncio.run(Engine(settings).run(request, hooks, resume=True))
    finally:
        hooks.close()
    if args.apply and result.status == "fixed" and result.change_set.changes:
        try:
            apply_change_set(workspace, result.change_set)
        except ChangeSetConflict as exc:
            result.error = f"not applied: {exc}"
            result.extra["error_kind"] = "bad_input"
    return _report(args, workspace, result)
