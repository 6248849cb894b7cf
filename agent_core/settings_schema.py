"""The JSON schema of the settings files, generated from the settings model.

Editors that check TOML against a JSON schema (taplo / Even Better TOML, via a
`#:schema` comment) complete and check `.agentls.toml` and the user config file
with it. `python -m agent_core.settings_schema` rewrites the committed copy,
`agent_core/settings.schema.json`; a test fails when the two drift apart, and
another checks the VS Code extension's `contributes.configuration` against it.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from agent_core.settings import Settings
from agent_core.settings_sources import FILE_FORBIDDEN, LEAF_DICTS

SCHEMA_FILE = Path(__file__).with_name("settings.schema.json")


def settings_schema() -> dict[str, Any]:
    """The schema of a settings file: snake_case keys, nested tables, no secrets."""
    schema = Settings.model_json_schema(by_alias=False)
    for key in FILE_FORBIDDEN:
        schema["properties"].pop(key, None)
    return {"$schema": "https://json-schema.org/draft/2020-12/schema", **schema}


def render() -> str:
    return json.dumps(settings_schema(), indent=2, ensure_ascii=False) + "\n"


def _resolve(schema: dict[str, Any], node: dict[str, Any]) -> dict[str, Any]:
    ref = node.get("$ref")
    if ref is None:
        return node
    return schema["$defs"][ref.removeprefix("#/$defs/")]


def leaves(schema: dict[str, Any], node: dict[str, Any] | None = None, prefix: str = "") -> Iterator[tuple[str, dict]]:
    """(dotted snake_case key, property schema) of every setting, descending into nested tables."""
    node = schema if node is None else node
    for name, prop in node["properties"].items():
        target = _resolve(schema, prop)
        if target.get("type") == "object" and "properties" in target and prefix + name not in LEAF_DICTS:
            yield from leaves(schema, target, f"{prefix}{name}.")
        else:
            yield prefix + name, prop


def json_types(prop: dict[str, Any]) -> set[str]:
    """The JSON types a property accepts (`anyOf` branches flattened)."""
    if "anyOf" in prop:
        return {t for branch in prop["anyOf"] for t in json_types(branch)}
    return {prop["type"]}


def bounds(prop: dict[str, Any]) -> dict[str, float]:
    """minimum / maximum / exclusive bounds, wherever in `anyOf` they sit."""
    keys = ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum")
    found = {k: prop[k] for k in keys if k in prop}
    for branch in prop.get("anyOf", ()):
        found.update(bounds(branch))
    return found


def enum(prop: dict[str, Any]) -> list[Any] | None:
    if "enum" in prop:
        return list(prop["enum"])
    for branch in prop.get("anyOf", ()):
        if "enum" in branch:
            return list(branch["enum"])
    return None


if __name__ == "__main__":
    SCHEMA_FILE.write_text(render(), encoding="utf-8")
    print(f"wrote {SCHEMA_FILE}")
