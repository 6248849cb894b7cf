"""`agentls prompts show [ROLE] [PATH]`: the effective prompt templates, after the user's overrides.

Overrides come from `prompts.<role>` in the workspace's settings (template
text or a path to a file). An override missing a required placeholder is
rejected with a message naming the missing ones (exit code 2).
"""

from __future__ import annotations

import argparse
import importlib
import sys
from pathlib import Path

from agent_core.agents.prompts import PROMPT_MODULES, effective_prompts
from agent_core.cli import EXIT_BAD_INPUT, EXIT_OK
from agent_core.cli.options import add_path, project_path
from agent_core.settings import SettingsError, load_settings


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("prompts", help="show the effective prompt templates per role")
    sub = p.add_subparsers(dest="prompts_command", required=True, metavar="ACTION")
    show = sub.add_parser("show", help="print the effective prompt of ROLE (default: every role)")
    show.add_argument("role", metavar="ROLE", nargs="?", help=f"one of {', '.join(PROMPT_MODULES)}")
    add_path(show)
    show.set_defaults(func=show_prompts)


def required_placeholders(role: str) -> tuple[str, ...]:
    """The placeholders an override of `role`'s prompt must keep."""
    return tuple(importlib.import_module(PROMPT_MODULES[role]).REQUIRED_PLACEHOLDERS)


def show_prompts(args: argparse.Namespace) -> int:
    if args.role and args.path is None and args.role not in PROMPT_MODULES and Path(args.role).is_dir():
        args.role, args.path = None, args.role  # `agentls prompts show myproject`
    workspace = project_path(args).resolve()
    if args.role is not None and args.role not in PROMPT_MODULES:
        return _fail(f"unknown role {args.role!r}; known: {', '.join(PROMPT_MODULES)}")
    try:
        settings = load_settings(workspace if workspace.is_dir() else None)
        prompts = effective_prompts(settings, workspace)
    except SettingsError as exc:
        return _fail(str(exc))
    roles = [args.role] if args.role else [r for r in PROMPT_MODULES if r in prompts]
    for role in roles:
        origin = "override" if role in settings.prompts else "default"
        required = ", ".join("{" + p + "}" for p in required_placeholders(role))
        print(f"=== {role} ({origin}; required placeholders: {required})")
        print(prompts[role].rstrip("\n"))
        print()
    return EXIT_OK


def _fail(message: str) -> int:
    print(f"agentls: {message}", file=sys.stderr)
    return EXIT_BAD_INPUT
