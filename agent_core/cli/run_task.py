"""`agentls run GOAL [PATH]`: a free-text task through the same pipeline as `fix`.

The planner turns the goal into steps, the coder edits a shadow copy, and the
change counts as done only when the project's tests pass in the sandbox;
when none fails before the change, the tester first writes tests of the goal
that fail now (pipeline/nodes/specify.py), and those must pass too: they come
with the change.
Output, --apply, --json and exit codes are those of `agentls fix`.
"""

from __future__ import annotations

import argparse
from pathlib import Path

from agent_core.cli.fix import _fail, add_run_options, execute
from agent_core.cli.options import overrides
from agent_core.models import RunRequest
from agent_core.settings import SettingsError, load_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser(
        "run", help="carry out a free-text task; verified by the project's tests and tests of the goal"
    )
    p.add_argument("goal", metavar="GOAL", help="what to do, e.g. 'add a --verbose flag to the CLI'")
    p.add_argument("path", metavar="PATH", nargs="?", default=".", help="the project directory (default: .)")
    p.add_argument("--file", help="the file the task is mainly about (relative to PATH)")
    p.add_argument("--hint", help="a steer for the planner and coder (where to look, what not to touch)")
    p.add_argument("--test-cmd", dest="test_cmd", help="test command run in the sandbox (default: pytest)")
    p.add_argument("--max-iterations", dest="max_iterations", type=int, help="code/test rounds (default 3)")
    add_run_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    workspace = Path(args.path).expanduser()
    if not workspace.is_dir():
        return _fail(args, f"{args.path} is not a directory")
    if not args.goal.strip():
        return _fail(args, "the goal is empty: say what the task should achieve")
    try:
        settings = load_settings(workspace.resolve(), overrides(
            args, base_url=args.base_url, model=args.model, test_command=args.test_cmd,
            max_iterations=args.max_iterations))
    except SettingsError as exc:
        return _fail(args, str(exc))
    request = RunRequest(kind="task", workspace=workspace.resolve(), goal=args.goal, target_file=args.file,
                         hint=args.hint)
    return execute(args, settings, request)
