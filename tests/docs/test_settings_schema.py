"""The committed JSON schema matches the settings model, and package.json's settings agree with the schema."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from pydantic.alias_generators import to_camel

from agent_core.settings_schema import SCHEMA_FILE, bounds, enum, json_types, leaves, render, settings_schema

ROOT = Path(__file__).resolve().parents[2]
# package.json settings that are the client's own, and schema keys the editor deliberately does not offer
# (the same lists, with reasons, as tests/editors/test_editors_settings_parity.py).
from editors.test_editors_settings_parity import CLIENT_ONLY, NOT_EXPOSED  # noqa: E402


def _properties() -> dict[str, dict[str, Any]]:
    package = json.loads((ROOT / "editor_client" / "package.json").read_text(encoding="utf-8"))
    return package["contributes"]["configuration"]["properties"]


def _editor_key(key: str) -> str:
    return "agentls." + ".".join(to_camel(part) for part in key.split("."))


SCHEMA = settings_schema()
LEAVES = dict(leaves(SCHEMA))


def test_committed_schema_matches_the_model():
    assert SCHEMA_FILE.read_text(encoding="utf-8") == render(), "regenerate: python -m agent_core.settings_schema"


def test_schema_has_no_secret_and_forbids_unknown_keys():
    assert "api_key" not in SCHEMA["properties"]
    assert SCHEMA["additionalProperties"] is False
    assert "sandbox.backend" in LEAVES and "prompts" in LEAVES


def test_package_json_and_schema_name_the_same_settings():
    offered = {k for k in _properties() if k not in CLIENT_ONLY}
    hidden = {"agentls." + k for k in NOT_EXPOSED}
    from_schema = {_editor_key(k) for k in LEAVES} - hidden
    assert offered == from_schema


@pytest.mark.parametrize("key", sorted(k for k in LEAVES if _editor_key(k).removeprefix("agentls.") not in NOT_EXPOSED))
def test_package_json_setting_agrees_with_the_schema(key: str):
    prop, editor = LEAVES[key], _properties()[_editor_key(key)]
    declared = set(editor["type"]) if isinstance(editor["type"], list) else {editor["type"]}
    assert declared == json_types(prop)
    assert editor.get("enum") == enum(prop)
    assert editor["default"] == prop.get("default", {})  # only a table (prompts) has no default in the schema
    assert {k: editor[k] for k in ("minimum", "maximum", "exclusiveMinimum", "exclusiveMaximum") if k in editor} \
        == bounds(prop)
    assert editor["description"].startswith(prop["description"])
