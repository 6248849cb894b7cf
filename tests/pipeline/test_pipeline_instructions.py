"""The project's AGENTS.md / CONVENTIONS.md reach the planner's, coder's and tester's prompts, bounded and named."""

from __future__ import annotations

import json
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from agent_core.agents.prompts import with_instructions
from agent_core.engine import Engine
from agent_core.events import NullHooks
from agent_core.journal.render import render_text
from agent_core.models import RunRequest
from agent_core.settings import load_settings
from agent_core.workspace.instructions import MAX_CHARS, read_project_instructions
from engine_support import FIX_EDIT, journal_records

PLAN = {"approach": "fix it", "subtasks": [
    {"id": "t1", "description": "make add add", "priority": 5, "dependencies": [], "files": ["calc.py"]}]}


def test_both_files_are_read_in_order_and_cut_at_the_bound(tmp_path: Path):
    assert read_project_instructions(tmp_path) is None
    (tmp_path / "CONVENTIONS.md").write_text("Use type hints.\n")
    (tmp_path / "AGENTS.md").write_text("Run tests with pytest -q.\n")
    found = read_project_instructions(tmp_path)
    assert found is not None and found.files == ("AGENTS.md", "CONVENTIONS.md") and not found.truncated
    assert found.text.index("pytest -q") < found.text.index("type hints")
    (tmp_path / "AGENTS.md").write_text("x" * (MAX_CHARS * 3))
    big = read_project_instructions(tmp_path)
    assert big is not None and big.truncated and len(big.text) <= MAX_CHARS + 1 and big.files == ("AGENTS.md",)


def test_a_symlinked_instruction_file_is_not_followed(tmp_path: Path):
    secret = tmp_path / "outside.txt"
    secret.write_text("SECRET-OUTSIDE\n")
    project = tmp_path / "p"
    project.mkdir()
    (project / "AGENTS.md").symlink_to(secret)
    assert read_project_instructions(project) is None


def test_placeholders_in_the_instructions_stay_text():
    prompts = with_instructions({"coder": "Fix {task}.", "reflector": "Why {failure}?"}, "Never write {task}.", ("A",))
    assert prompts["coder"].startswith("Fix {task}.") and "Never write { task }." in prompts["coder"]
    assert prompts["reflector"] == "Why {failure}?"


async def test_a_task_run_shows_agents_md_to_planner_and_coder_and_the_trace_names_it(project: Path, scripted_llm):
    (project / "AGENTS.md").write_text("House rule MARKER-7: keep functions pure.\n")
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", FIX_EDIT)
    settings = load_settings(project, {"base_url": scripted_llm.base_url, "search": {"enabled": False}})
    engine = Engine(settings, checkpointer=InMemorySaver())

    result = await engine.run(RunRequest(kind="task", workspace=project, goal="Make add correct"), NullHooks())

    assert result.status == "ok", result.error
    for role in ("planner", "coder"):
        assert "MARKER-7" in json.dumps(scripted_llm.requests_for(role)[0]["messages"]), role
    [record] = [r for r in journal_records(project, result.run_id) if r["type"] == "instructions"]
    assert record["files"] == ["AGENTS.md"] and "coder" in record["roles"]
    assert "project instructions: AGENTS.md" in render_text(project, result.run_id)
