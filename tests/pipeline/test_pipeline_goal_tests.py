"""The tester in the loop: the goal's tests are kept only when they fail before the change, and stay as written."""

from __future__ import annotations

import json
from pathlib import Path

from langgraph.checkpoint.memory import InMemorySaver

from agent_core.engine import Engine
from agent_core.events import MessageEvent
from agent_core.models import RunRequest
from agent_core.settings import load_settings
from engine_support import journal_records, make_project

PROJECT = {
    "calc.py": "def add(a, b):\n    return a + b\n",
    "tests/test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
    "pyproject.toml": '[tool.pytest.ini_options]\npythonpath = ["."]\n',
}
GOAL = "add neg(x) to calc.py returning -x"
GOAL_FILE = "tests/test_goal_add_neg_to_calc.py"
PLAN = {"approach": "add neg", "subtasks": [{"id": "t1", "description": "add neg(x) to calc.py", "files": ["calc.py"]}]}
NEG = {
    "edits": [
        {
            "path": "calc.py",
            "search": "    return a + b\n",
            "replace": "    return a + b\n\n\ndef neg(x):\n    return -x\n",
        }
    ]
}
NEG_TEST = {
    "name": "test_neg",
    "kind": "pytest",
    "code": "from calc import neg\n\n\ndef test_neg():\n    assert neg(3) == -3\n",
}
PASSES_ALREADY = {
    "name": "test_add_zero",
    "kind": "pytest",
    "code": "from calc import add\n\n\ndef test_add_zero():\n    assert add(0, 0) == 0\n",
}
REFLECTION = {"hypothesis": "neg is missing", "file": "calc.py", "change": "define neg", "confidence": "high"}


class Hooks:
    def __init__(self) -> None:
        self.messages: list[str] = []

    def emit(self, event) -> None:
        if isinstance(event, MessageEvent):
            self.messages.append(event.text)

    async def approve(self, violations) -> bool:
        return False


async def _task(project: Path, base_url: str, hooks: Hooks | None = None):
    engine = Engine(load_settings(project, {"base_url": base_url, "samples": 1}), checkpointer=InMemorySaver())
    return await engine.run(RunRequest(kind="task", workspace=project, goal=GOAL), hooks or Hooks())


async def test_generated_tests_that_already_pass_are_dropped_and_the_existing_tests_judge(tmp_path: Path, scripted_llm):
    project = make_project(tmp_path / "p", PROJECT)
    scripted_llm.add("tester", {"tests": [PASSES_ALREADY, {"name": "test_broken", "code": "def test_broken(:\n"}]})
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", NEG)
    hooks = Hooks()

    result = await _task(project, scripted_llm.base_url, hooks)

    assert (result.status, result.change_set.files) == ("ok", ["calc.py"]), result.error
    assert result.goal_tests is not None
    assert result.goal_tests.model_dump() == {"path": GOAL_FILE, "tests": [], "dropped": ["test_add_zero"]}
    assert any("no generated test of the goal failed before the change" in m for m in hooks.messages)
    assert not list((project / "tests").glob("test_goal_*")), "nothing is written to the workspace"


async def test_a_candidate_that_rewrites_the_goals_test_is_undone(tmp_path: Path, scripted_llm):
    project = make_project(tmp_path / "p", PROJECT)
    scripted_llm.add("tester", {"tests": [NEG_TEST]})
    scripted_llm.add("planner", PLAN)
    scripted_llm.add(
        "coder", {"edits": [{"path": GOAL_FILE, "search": "from calc import neg\n", "replace": "neg = abs\n"}]}
    )
    scripted_llm.add("coder", NEG)
    scripted_llm.default("reflector", REFLECTION)

    result = await _task(project, scripted_llm.base_url)

    assert (result.status, result.change_set.files) == ("ok", ["calc.py", GOAL_FILE]), result.error
    test_change = result.change_set.changes[1]
    assert test_change.kind == "create" and "from calc import neg" in test_change.new and "abs" not in test_change.new
    guarded = [
        r
        for r in journal_records(project, result.run_id)
        if r["type"] == "tool_call" and r["tool"] == "guard_goal_tests"
    ]
    assert guarded and guarded[0]["args"] == {"path": GOAL_FILE}
    second = json.dumps(scripted_llm.requests_for("coder")[1]["messages"])
    assert "the goal's tests judge this run" in second, "the coder is told its edit of the judge was undone"


async def test_a_project_without_any_test_gets_its_first_from_the_goal(tmp_path: Path, scripted_llm):
    project = make_project(tmp_path / "p", {k: v for k, v in PROJECT.items() if not k.startswith("tests/")})
    scripted_llm.add("tester", {"tests": [NEG_TEST]})
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", NEG)

    result = await _task(project, scripted_llm.base_url)

    assert (result.status, result.change_set.files) == ("ok", ["calc.py", GOAL_FILE]), result.error
    assert (result.report.passed, result.report.failed) == (1, 0)
    assert [r for r in journal_records(project, result.run_id) if r["type"] == "baseline_broken"] == []
