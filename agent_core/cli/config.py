"""`agentls config show | schema | path`: the effective settings and where each value came from.

`show` prints one line per setting: its dotted key, its value, and the layer
that set it (default, user file, pyproject, .agentls.toml, env, flag). API keys
are printed as `***` with the variable they came from. `--json` prints one
object: `{"settings": [{"key", "value", "source", "origin"}], "files": {...}}`.
`schema` prints the settings files' JSON schema; `path` the user config file.
"""

from __future__ import annotations

import argparse
import json
import os
import sys
from pathlib import Path
from typing import Any

from agent_core.settings import SettingsError, load_settings_with_layers
from agent_core.settings_sources import DEFAULT, ENV, LEAF_DICTS, leaf_paths, origins, user_config_file

EXIT_OK, EXIT_BAD_INPUT = 0, 2
SECRET = "***"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("config", help="Show the effective settings and where each came from.")
    commands = parser.add_subparsers(dest="config_command", required=True, metavar="CONFIG_COMMAND")
    show = commands.add_parser("show", help="Each setting, its value and its source.")
    show.add_argument("--workspace", type=Path, default=Path.cwd(), help="Workspace whose settings apply.")
    show.add_argument("--set", dest="flags", action="append", default=[], metavar="KEY=VALUE",
                      help="An override, as a CLI flag or the editor would give it (dotted KEY; VALUE as JSON "
                           "or a plain string); repeatable.")
    show.add_argument("--json", action="store_true", help="Print one JSON object.")
    show.set_defaults(func=show_command)
    schema = commands.add_parser("schema", help="Print the JSON schema of the settings files.")
    schema.set_defaults(func=schema_command)
    path = commands.add_parser("path", help="Print the user config file's path.")
    path.set_defaults(func=path_command)


def _parse_flags(pairs: list[str]) -> dict[str, Any]:
    out: dict[str, Any] = {}
    for pair in pairs:
        key, sep, text = pair.partition("=")
        if not sep:
            raise SettingsError(f"--set {pair!r}: expected KEY=VALUE")
        try:
            value: Any = json.loads(text)
        except json.JSONDecodeError:
            value = text
        *parents, leaf = key.split(".")
        node = out
        for part in parents:
            node = node.setdefault(part, {})
        node[leaf] = value
    return out


def effective_rows(workspace: Path | None, flags: dict[str, Any], env: Any = None) -> list[dict[str, Any]]:
    """One row per setting: key, value, source (layer name) and origin (file path, variable, ...)."""
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
    return rows


def show_command(args: argparse.Namespace) -> int:
    workspace = args.workspace.resolve() if args.workspace.is_dir() else None
    try:
        rows = effective_rows(workspace, _parse_flags(args.flags))
    except SettingsError as exc:
        print(f"agentls: {exc}", file=sys.stderr)
        return EXIT_BAD_INPUT
    if args.json:
        files = {"user": str(user_config_file(os.environ)), "workspace": str(workspace) if workspace else None}
        print(json.dumps({"settings": rows, "files": files}, indent=2))
        return EXIT_OK
    width = max(len(row["key"]) for row in rows)
    for row in rows:
        where = row["source"] + (f" ({row['origin']})" if row["origin"] and row["source"] != "flag" else "")
        print(f"{row['key']:<{width}}  {json.dumps(row['value'])}  [{where}]")
    return EXIT_OK


def path_command(_args: argparse.Namespace) -> int:
    print(user_config_file(os.environ))
    return EXIT_OK


def schema_command(_args: argparse.Namespace) -> int:
    from agent_core.settings_schema import render

    print(render(), end="")
    return EXIT_OK
