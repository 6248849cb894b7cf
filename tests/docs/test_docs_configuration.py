"""docs/configuration.md is generated from the settings model and must not drift from it."""

from pathlib import Path

from agent_core.settings.doc import render, rows

ROOT = Path(__file__).resolve().parents[2]


def test_configuration_doc_matches_the_model():
    doc = (ROOT / "docs" / "configuration.md").read_text(encoding="utf-8")
    assert doc == render(), "regenerate with: python -m agent_core.settings.doc > docs/configuration.md"


def test_every_setting_has_a_description():
    missing = [key for key, _, _, _, desc in rows() if not desc.strip()]
    assert missing == []


def test_nested_settings_are_flattened_with_editor_keys():
    keys = {key: editor for key, editor, *_ in rows()}
    assert keys["sandbox.timeout_s"] == "agentls.sandbox.timeoutS"
    assert keys["roles.coder.api_key_env"] == "agentls.roles.coder.apiKeyEnv"
    assert "api_key" not in keys
