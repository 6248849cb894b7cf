"""Prompt overrides: text or file, and rejection of overrides missing required placeholders."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.agents.coder import prompt as coder_prompt
from agent_core.agents.prompts import effective_prompts
from agent_core.agents.render import placeholders, render
from agent_core.settings import Settings, SettingsError


def test_defaults_hold_their_required_placeholders():
    prompts = effective_prompts(Settings())
    assert {"planner", "coder", "reflector"} <= set(prompts)
    assert set(coder_prompt.REQUIRED_PLACEHOLDERS) <= placeholders(prompts["coder"])


@pytest.mark.parametrize(
    "role, text, missing",
    [
        ("coder", "Fix {task} in {files}", "{failure}, {hypothesis}"),
        ("planner", "Plan: {goal}", "{context}"),
        ("reflector", "Why? {failure}", "{files}"),
        ("coder", "no placeholders at all", "{task}, {files}, {failure}, {hypothesis}"),
    ],
)
def test_override_missing_placeholders_is_rejected(role, text, missing):
    with pytest.raises(SettingsError) as info:
        effective_prompts(Settings(prompts={role: text}))
    assert str(info.value) == f"prompts.{role}: the override is missing required placeholder(s) {missing}"


def test_text_and_file_overrides(tmp_path: Path):
    (tmp_path / "planner.txt").write_text("PLAN {goal}\n{context}\n")
    prompts = effective_prompts(
        Settings(prompts={"planner": "planner.txt", "reflector": "R {failure} {files} {past} {\"json\": 1}"}),
        tmp_path,
    )
    assert prompts["planner"] == "PLAN {goal}\n{context}\n"
    assert render(prompts["reflector"], {"failure": "F", "files": "X"}) == 'R F X {past} {"json": 1}'


def test_unknown_role_and_missing_file():
    with pytest.raises(SettingsError, match="unknown role"):
        effective_prompts(Settings(prompts={"critic": "{x}"}))
    with pytest.raises(SettingsError, match="does not exist"):
        effective_prompts(Settings(prompts={"coder": "nope/coder.txt"}))
