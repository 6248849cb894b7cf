"""Memory that helps: one store per project, only verified fixes as patterns, recalled as a labelled hint."""

from __future__ import annotations

import sqlite3
from pathlib import Path

from agent_core.memory.base import NullMemory
from agent_core.memory.factory import open_memory
from agent_core.settings import load_settings
from testkit.runs_support import BUGGY_CALC, FIX_EDIT, WRONG_EDIT, make_project, prompt_of

GOAL = "Fix add in calc.py so that test_add passes"
PLAN = {"approach": "swap the operator", "subtasks": [
    {"id": "t1", "description": "replace the subtraction in add with an addition (MARKER-7f3a)", "priority": 5,
     "dependencies": [], "files": ["calc.py"]}]}
NOISY_FIX = {"edits": [
    {"path": "calc.py", "search": "def add(a, b):", "replace": "import time\n\n\ndef add(a, b):"},
    FIX_EDIT["edits"][0],
    {"path": "calc.py", "search": "    return a * b", "replace": "    return a * b  # checked"},
]}
LABEL = "Hints from this project's memory"


def _patterns(project: Path) -> list[tuple[str, str, str]]:
    with sqlite3.connect(project / ".agentls" / "memory.sqlite") as db:
        return db.execute("SELECT goal, plan, diff FROM patterns").fetchall()


def _fix(cli, scripted_llm, project: Path, coder: dict) -> dict:
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", coder)
    run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json", "--goal", GOAL)
    assert run.code == 0, run.stderr
    return run.json


def test_a_projects_memory_never_reaches_another_project(tmp_path: Path, scripted_llm, cli):
    first = make_project(tmp_path / "first", BUGGY_CALC)
    other = make_project(tmp_path / "other", BUGGY_CALC)

    assert _fix(cli, scripted_llm, first, FIX_EDIT)["status"] == "fixed"
    assert [p[1] for p in _patterns(first)] == [PLAN["subtasks"][0]["description"]]
    assert _fix(cli, scripted_llm, other, FIX_EDIT)["status"] == "fixed"
    assert _fix(cli, scripted_llm, first, FIX_EDIT)["status"] == "fixed"

    prompts = [prompt_of(r) for r in scripted_llm.requests_for("planner")]
    assert "MARKER-7f3a" not in prompts[1].split("Goal:", 1)[1].split("Break the goal")[0]
    assert LABEL not in prompts[1], "the other project's planner got nothing of the first one's memory"
    assert (
        LABEL in prompts[2] and "its plan: replace the subtraction in add with an addition (MARKER-7f3a)" in prompts[2]
    )
    assert "+    return a + b" in prompts[2], "the first project's own memory is recalled, as a hint"
    assert not (tmp_path / "cache").exists() or not list((tmp_path / "cache").rglob("memory.sqlite"))


def test_a_verified_pattern_keeps_only_the_hunks_the_tests_need(project: Path, scripted_llm, cli):
    out = _fix(cli, scripted_llm, project, NOISY_FIX)

    assert out["status"] == "fixed" and out["files_changed"] == ["calc.py"]
    [(goal, _plan, diff)] = _patterns(project)
    assert goal.startswith(GOAL)
    assert "+    return a + b" in diff
    assert "import time" not in diff and "# checked" not in diff, "the attempt's noise is not remembered"


def test_an_unfixed_run_stores_no_pattern_only_failures(project: Path, scripted_llm, cli):
    scripted_llm.default("planner", PLAN)
    scripted_llm.default("coder", WRONG_EDIT)
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})

    run = cli(
        "fix", str(project), "--base-url", scripted_llm.base_url, "--json", "--goal", GOAL, "--max-iterations", "1"
    )

    assert run.code == 1 and run.json["status"] == "unfixed", run.stderr
    assert _patterns(project) == []
    with sqlite3.connect(project / ".agentls" / "memory.sqlite") as db:
        assert db.execute("SELECT count(*) FROM failures WHERE fix IS NULL").fetchone()[0] >= 1


def test_the_store_is_the_projects_unless_a_path_is_set(tmp_path: Path):
    settings = load_settings(None, env={})
    assert isinstance(open_memory(settings), NullMemory), "no project and no path: no store shared by all"
    store = open_memory(settings, workspace=tmp_path / "proj")
    store.record_pattern("fix", "g", "p", [], "fixed", "+x\n")
    assert (tmp_path / "proj" / ".agentls" / "memory.sqlite").is_file()
    chosen = load_settings(None, overrides={"memory": {"path": str(tmp_path / "m.sqlite")}}, env={})
    open_memory(chosen, workspace=tmp_path / "proj").record_pattern("fix", "g", "p", [], "fixed")
    assert (tmp_path / "m.sqlite").is_file()
