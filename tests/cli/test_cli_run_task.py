"""`agentls run GOAL PATH`: a free-text task planned, coded and verified by the project's tests."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from agent_core.cli import main

PROJECT = {
    "greet.py": "def greet(name):\n    return 'Hello ' + name\n",
    "test_greet.py": "from greet import greet\n\n\ndef test_greet():\n    assert greet('Ann') == 'Hello Ann'\n",
}
PLAN = {
    "approach": "add a shout helper",
    "subtasks": [
        {
            "id": "t1",
            "description": "add shout(name) to greet.py returning greet(name).upper()",
            "priority": 3,
            "dependencies": [],
            "files": ["greet.py"],
        }
    ],
}
EDIT = {
    "edits": [
        {
            "path": "greet.py",
            "search": "    return 'Hello ' + name\n",
            "replace": "    return 'Hello ' + name\n\n\ndef shout(name):\n    return greet(name).upper()\n",
        }
    ],
    "explanation": "add shout",
}
GOAL_TESTS = {
    "tests": [
        {
            "name": "test_shout",
            "code": "from greet import shout\n\n\ndef test_shout():\n    assert shout('Ann') == 'HELLO ANN'\n",
            "kind": "pytest",
            "target": "shout",
            "rationale": "shout upper-cases the greeting",
        },
        {
            "name": "test_greet_still",
            "code": "from greet import greet\n\n\ndef test_greet_still():\n    assert greet('B') == 'Hello B'\n",
            "kind": "pytest",
            "target": "greet",
            "rationale": "passes already: says nothing about the goal",
        },
    ]
}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    for rel, text in PROJECT.items():
        (root / rel).write_text(text)
    return root


def _run(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(["run", *args])
    return code, out.getvalue(), err.getvalue()


def test_task_is_planned_coded_verified_and_applied(project: Path, scripted_llm):
    scripted_llm.add("tester", GOAL_TESTS)
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", EDIT)
    scripted_llm.add("explainer", "greet.py had no shout helper. It has one now.")
    code, out, err = _run(
        "add a shout helper to greet.py", str(project), "--base-url", scripted_llm.base_url, "--json", "--apply"
    )
    summary = json.loads(out.strip().splitlines()[-1])
    goal_test = "test_goal_add_shout_helper_to.py"
    assert (code, summary["status"], summary["files_changed"]) == (0, "fixed", ["greet.py", goal_test]), err
    assert "def shout(name):" in (project / "greet.py").read_text()
    written = (project / goal_test).read_text()
    assert "def test_shout():" in written, "the goal's test is part of the change"
    assert "test_greet_still" not in written, "a generated test that passed before the change is dropped"
    assert summary["tests"] == {"passed": 2, "failed": 0, "errors": 0, "skipped": 0}, (
        "the existing test and the goal's test")
    planner_prompt = json.dumps(scripted_llm.requests_for("planner")[0]["messages"])
    assert "add a shout helper to greet.py" in planner_prompt
    coder_prompt = json.dumps(scripted_llm.requests_for("coder")[0]["messages"])
    assert "test_shout" in coder_prompt, "the coder sees the goal's test failing"
    assert summary["usage"]["llm_calls"] == 4, "goal tests, plan, code, explain"
    assert summary["explanation"] == "greet.py had no shout helper. It has one now."


def test_empty_goal_and_missing_path_are_bad_input(project: Path, tmp_path: Path):
    assert _run("   ", str(project))[0] == 2
    code, _, err = _run("do it", str(tmp_path / "nope"))
    assert code == 2 and "not a directory" in err
