"""Options several subcommands share, spelt once: the project PATH (with its old `--workspace` spelling) and
`--set KEY=VALUE` overrides of any setting.

PATH is positional and defaults to `.` on every command that works on a
project; `--workspace PATH`, the older spelling of some commands, is still
accepted but hidden from --help, so scripts written for it keep working.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path
from typing import Any

from agent_core.settings import SettingsError


def add_path(p: argparse.ArgumentParser, what: str = "the project directory") -> None:
    """A positional PATH (default `.`) and the hidden `--workspace` alias of it."""
    p.add_argument("path", metavar="PATH", nargs="?", default=None, help=f"{what} (default: .)")
    p.add_argument("--workspace", dest="workspace_alias", metavar="PATH", help=argparse.SUPPRESS)


def project_path(args: argparse.Namespace) -> Path:
    """The PATH given (positional, or the old --workspace), else the current directory."""
    given = getattr(args, "workspace_alias", None) or getattr(args, "path", None) or "."
    return Path(given).expanduser()


def add_set(p: argparse.ArgumentParser) -> None:
    """`--set KEY=VALUE`, repeatable, as `config show` takes it."""
    p.add_argument("--set", dest="flags", action="append", default=[], metavar="KEY=VALUE",
                   help="override a setting (dotted KEY, e.g. search.enabled=false or token_budget=20000; VALUE as "
                        "JSON or a plain string); repeatable")


def parse_flags(pairs: list[str]) -> dict[str, Any]:
    """`--set` pairs as a nested dict; SettingsError for a pair without `=`."""
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep or not key.strip():
            raise SettingsError(f"--set {pair!r}: expected KEY=VALUE")
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError:
            value = text
        *parents, leaf = key.strip().split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def overrides(args: argparse.Namespace, **flags: Any) -> dict[str, Any]:
    """`--set` overrides, then the command's own flags that were given (a flag wins over --set)."""
    out = parse_flags(getattr(args, "flags", None) or [])
    out.update({key: value for key, value in flags.items() if value is not None})
    return out


def add_run_and_path(p: argparse.ArgumentParser) -> None:
    """`[RUN_ID] [PATH]` (the latest run, in `.`, by default) and the hidden `--workspace` alias of PATH."""
    p.add_argument("run_id", metavar="RUN_ID", nargs="?", help="the run (default: the latest)")
    add_path(p)


def run_and_path(args: argparse.Namespace) -> tuple[str | None, Path]:
    """The run id and project folder given; a lone argument naming a folder is the folder (`agentls trace proj`)."""
    run_id = args.run_id
    if run_id is not None and args.path is None and not args.workspace_alias and Path(run_id).expanduser().is_dir():
        return None, Path(run_id).expanduser()
    return run_id, project_path(args)
