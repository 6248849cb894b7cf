"""Prompt overrides: a template missing a required placeholder is rejected by name; a valid one is used."""

from __future__ import annotations

from pathlib import Path

from agent_core.agents.coder.prompt import TEMPLATE as CODER_TEMPLATE
from testkit.runs_support import FIX_EDIT, prompt_of


def test_override_missing_placeholders_is_rejected(project: Path, scripted_llm, cli):
    (project / ".agentls.toml").write_text('[prompts]\ncoder = "Task: {task}\\nFiles:\\n{files}\\n"\n')

    run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 2 and run.json["status"] == "error"
    assert run.json["error"] == "prompts.coder: the override is missing required placeholder(s) {failure}, {hypothesis}"
    assert scripted_llm.requests == [], "rejected before any model call"
    shown = cli("prompts", "show", "coder", "--workspace", str(project))
    assert shown.code == 2 and "{failure}, {hypothesis}" in shown.stderr and shown.stdout == ""


def test_valid_override_from_a_file_is_shown_and_used(project: Path, scripted_llm, cli):
    (project / "prompts").mkdir()
    (project / "prompts" / "coder.txt").write_text("CUSTOM-CODER-PROMPT\n" + CODER_TEMPLATE)
    (project / ".agentls.toml").write_text('[prompts]\ncoder = "prompts/coder.txt"\n')

    shown = cli("prompts", "show", "coder", "--workspace", str(project))
    assert shown.code == 0, shown.stderr
    assert shown.stdout.startswith("=== coder (override; required placeholders: {task}, {files}, {failure}")
    assert "CUSTOM-CODER-PROMPT" in shown.stdout
    every = cli("prompts", "show", "--workspace", str(project))
    assert [line.split()[1] for line in every.stdout.splitlines() if line.startswith("=== ")] == [
        "planner", "coder", "reflector", "tester", "explainer", "verifier"]

    scripted_llm.add("coder", FIX_EDIT)
    run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json")
    assert run.code == 0, run.stderr
    assert prompt_of(scripted_llm.requests_for("coder")[0]).count("CUSTOM-CODER-PROMPT") == 1
