"""`agentls config show | schema | path | trust`: the effective settings and where each value came from.

`show [PATH]` prints one line per setting: its dotted key, its value, and the layer
that set it (default, user file, pyproject, .agentls.toml, env, flag). API keys
are printed as `***` with the variable they came from. A key a project file set
but may not, or a limit it loosened (settings/trust.py, limits.py), is listed after them as ignored, with the file
and the reason. `--json` prints one object: `{"settings": [{"key", "value",
"source", "origin"}], "ignored": [{"key", "value", "origin", "why"}],
"warnings": [...], "trusted": PATH or null, "files": {...}}`. `schema` prints
the settings files' JSON schema; `path` the user config file; `trust PATH`
adds a folder to the trusted-folders list beside it (`--remove`, `--list`).
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agent_core.cli import jsonout
from agent_core.cli.options import add_path, add_set, parse_flags, project_path
from agent_core.settings import Settings, SettingsError, load_settings_with_layers
from agent_core.settings.redact import redact_url
from agent_core.settings.schema import render
from agent_core.settings.sources import DEFAULT, ENV, LEAF_DICTS, leaf_paths, origins, user_config_file
from agent_core.settings.trust import set_trusted, trust_file, trusted_folders, trusted_root

EXIT_OK, EXIT_BAD_INPUT = 0, 2
SECRET = "***"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("config", help="Show the effective settings and where each came from.")
    commands = parser.add_subparsers(dest="config_command", required=True, metavar="CONFIG_COMMAND")
    show = commands.add_parser("show", help="Each setting, its value and its source.")
    add_path(show, "the workspace whose settings apply")
    add_set(show)
    show.add_argument("--json", action="store_true", help="Print one JSON object.")
    show.set_defaults(func=show_command)
    schema = commands.add_parser("schema", help="Print the JSON schema of the settings files.")
    schema.set_defaults(func=schema_command)
    path = commands.add_parser("path", help="Print the user config file's path.")
    path.set_defaults(func=path_command)
    trust = commands.add_parser(
        "trust", help="Let a folder's own settings files set endpoints, key variables, the sandbox and safety.")
    trust.add_argument("folder", nargs="?", type=Path, default=Path.cwd(), help="The folder (default: here).")
    trust.add_argument("--remove", action="store_true", help="Stop trusting the folder.")
    trust.add_argument("--list", action="store_true", help="Print the trusted folders.")
    trust.set_defaults(func=trust_command)


def effective_rows(workspace: Path | None, flags: dict[str, Any], env: Any = None) -> list[dict[str, Any]]:
    """One row per setting: key, value, source (layer name) and origin (file path, variable, ...)."""
    return _effective(workspace, flags, env)[0]


def _effective(workspace: Path | None, flags: dict[str, Any], env: Any = None) -> tuple[list[dict[str, Any]], Settings]:
    settings, layers, key_var = load_settings_with_layers(workspace, flags or None, env)
    set_by = origins(layers)
    rows = []
    values = settings.model_dump(mode="json")
    for key, value in leaf_paths(values):
        layer = set_by.get(key)
        if layer is None and key not in LEAF_DICTS:  # a table set whole (prompts) is one leaf
            layer = next((set_by[k] for k in set_by if k.startswith(key + ".")), None)
        rows.append({"key": key, "value": value, "source": layer.name if layer else DEFAULT,
                     "origin": layer.origin_of(key) if layer else ""})
    rows.insert(3, {"key": "api_key", "value": SECRET if key_var else None,
                    "source": ENV if key_var else DEFAULT, "origin": key_var or ""})
    for row in rows:
        if isinstance(row["value"], str) and "://" in row["value"]:
            row["value"] = redact_url(row["value"])
    return rows, settings


def show_command(args: argparse.Namespace) -> int:
    folder = project_path(args)
    workspace = folder.resolve() if folder.is_dir() else None
    try:
        rows, settings = _effective(workspace, parse_flags(args.flags))
    except SettingsError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    ignored = [{"key": i.key, "value": i.shown_value(), "origin": i.origin, "why": i.refusal()}
               for i in settings.ignored]
    trusted = trusted_root(workspace, os.environ) if workspace else None
    if args.json:
        files = {"user": str(user_config_file(os.environ)), "workspace": str(workspace) if workspace else None,
                 "trusted_folders": str(trust_file(os.environ))}
        print(jsonout.dumps({"settings": rows, "ignored": ignored, "warnings": settings.notices[len(ignored):],
                          "trusted": str(trusted) if trusted else None, "files": files}, indent=2))
        return EXIT_OK
    width = max(len(row["key"]) for row in rows)
    for row in rows:
        where = row["source"] + (f" ({row['origin']})" if row["origin"] and row["source"] != "flag" else "")
        print(f"{row['key']:<{width}}  {json.dumps(row['value'])}  [{where}]")
    for item in ignored:
        print(f"{item['key']:<{width}}  {json.dumps(item['value'])}  [IGNORED ({item['origin']}): {item['why']}]")
    if ignored:
        print(f"(trust this folder's settings files with: agentls config trust {workspace})")
    if trusted:
        print(f"(this folder's settings files are trusted: {trusted} is in {trust_file(os.environ)})")
    for warning in settings.notices[len(ignored):]:
        print(f"agentls: warning: {warning}", file=sys.stderr)
    return EXIT_OK


def trust_command(args: argparse.Namespace) -> int:
    if args.list:
        for folder in trusted_folders(os.environ):
            print(folder)
        return EXIT_OK
    folder = args.folder.expanduser()
    if not folder.is_dir() and not args.remove:
        print(f"agentls: {folder} is not a directory", file=sys.stderr)
        return EXIT_BAD_INPUT
    where = set_trusted(folder, os.environ, trusted=not args.remove)
    verb = "no longer trusted" if args.remove else "trusted: its settings files may set every key"
    print(f"{folder.resolve()}: {verb} ({where})")
    return EXIT_OK


def path_command(_args: argparse.Namespace) -> int:
    print(user_config_file(os.environ))
    return EXIT_OK


def schema_command(_args: argparse.Namespace) -> int:
    print(render(), end="")
    return EXIT_OK
