"""`Engine.run` called directly, as the language server does: events, replan, checkpoints, cancel, test-only."""

from __future__ import annotations

import asyncio
import json
import tempfile
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent_core.engine import Engine
from agent_core.events import NullHooks, PhaseEvent
from agent_core.events import TestReportEvent as ReportEvent
from agent_core.models import RunRequest
from agent_core.settings import load_settings
from engine_support import WRONG_EDIT, journal_records, snapshot
from testkit.scripted_llm import Fault

STEP = {"approach": "again", "subtasks": [
    {"id": "t1", "description": "fix add in calc.py", "priority": 5, "dependencies": [], "files": ["calc.py"]}]}


def _engine(project: Path, base_url: str, **overrides) -> Engine:
    return Engine(load_settings(project, {"base_url": base_url, **overrides}), checkpointer=InMemorySaver())


async def test_same_failure_twice_triggers_a_replan(project: Path, scripted_llm):
    scripted_llm.default("coder", WRONG_EDIT)
    scripted_llm.default("reflector", {"hypothesis": "h", "file": "calc.py", "change": "c", "confidence": "low"})
    scripted_llm.default("planner", STEP)
    hooks = NullHooks()

    result = await _engine(project, scripted_llm.base_url, max_iterations=3).run(
        RunRequest(kind="fix", workspace=project, overlays={"README.md": "unsaved text\n"}), hooks)

    assert result.status == "unfixed" and result.iterations == 3 and result.change_set.changes == []
    assert "calc.py" in result.attempt_diff
    phases = [e.phase for e in hooks.events if isinstance(e, PhaseEvent)]
    assert phases.count("replanning") == 1 and phases.count("reflecting") == 2
    assert len(scripted_llm.requests_for("planner")) == 1, "the textual pre-plan, then one LLM replan"
    assert "the same failure repeated" in json.dumps(scripted_llm.requests_for("planner")[0]["messages"])
    reports = [e for e in hooks.events if isinstance(e, ReportEvent)]
    assert len(reports) == 4, "the baseline plus one per iteration"
    pcts = [e.percentage for e in hooks.events if isinstance(e, PhaseEvent)]
    assert pcts == sorted(pcts) and pcts[-1] < 100


async def test_tests_already_passing_is_nothing_to_fix(tmp_path: Path, scripted_llm):
    project = tmp_path / "ok"
    project.mkdir()
    (project / "test_ok.py").write_text("def test_ok():\n    assert [0] == [0]\n")

    result = await _engine(project, scripted_llm.base_url).run(RunRequest(kind="fix", workspace=project), NullHooks())

    assert result.status == "passed" and result.iterations == 0 and scripted_llm.requests == []


DOC_TEST = {"tests": [{"name": "test_add_is_documented", "kind": "pytest", "target": "add",
                       "code": "from calc import add\n\n\ndef test_add_is_documented():\n    assert add.__doc__\n"}]}


@pytest.mark.parametrize("ask, goal_test", [
    ({"goal": "give add a docstring"}, "test_goal_give_add_docstring.py"),
    ({"diagnostics": ["calc.py:1 missing docstring"]}, "test_goal_calc_py_missing_docstring.py"),
])
async def test_passing_tests_do_not_end_a_run_the_user_gave_a_goal(tmp_path: Path, scripted_llm, ask: dict,
                                                                    goal_test: str):
    project = tmp_path / "ok"
    project.mkdir()
    (project / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    (project / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    scripted_llm.add("tester", DOC_TEST)  # no test fails: the tester writes the one that judges the change
    scripted_llm.add("planner", {"approach": "document add", "subtasks": [
        {"id": "t1", "description": "add a docstring to add in calc.py", "files": ["calc.py"]}]})
    scripted_llm.add("coder", {"edits": [{"path": "calc.py", "search": "def add(a, b):\n",
                                          "replace": "def add(a, b):\n    \"\"\"Sum of a and b.\"\"\"\n"}]})

    result = await _engine(project, scripted_llm.base_url).run(RunRequest(kind="fix", workspace=project, **ask),
                                                               NullHooks())

    assert (result.status, result.change_set.files) == ("fixed", ["calc.py", goal_test]), result.error
    assert '"""Sum of a and b."""' in result.change_set.changes[0].new
    assert result.goal_tests and result.goal_tests.tests == ["test_add_is_documented"]
    assert result.report.passed == 2 and not result.report.failures
    assert "Sum of a and b" not in (project / "calc.py").read_text()


async def test_test_only_run(project: Path, scripted_llm):
    hooks = NullHooks()
    result = await _engine(project, scripted_llm.base_url).run(RunRequest(kind="test", workspace=project), hooks)
    assert result.status == "failed" and result.report.failed == 1 and result.report.passed == 1
    assert [f.nodeid for f in result.report.failures] == ["test_calc.py::test_add"]
    assert any(isinstance(e, ReportEvent) for e in hooks.events) and scripted_llm.requests == []


async def test_bad_requests_are_errors_not_exceptions(tmp_path: Path, scripted_llm):
    engine = _engine(tmp_path, scripted_llm.base_url)
    missing = await engine.run(RunRequest(kind="fix", workspace=tmp_path / "missing"), NullHooks())
    assert missing.status == "error" and "is not a directory" in missing.error
    task = await engine.run(RunRequest(kind="task", workspace=tmp_path), NullHooks())
    assert task.status == "error" and task.error == "a task needs a goal"


async def test_cancel_stops_the_run_and_removes_the_shadow(
    project: Path, scripted_llm, monkeypatch: pytest.MonkeyPatch
):
    made: list[Path] = []
    real_mkdtemp = tempfile.mkdtemp

    def recording_mkdtemp(*args, **kwargs):
        made.append(Path(real_mkdtemp(*args, **kwargs)))
        return str(made[-1])

    monkeypatch.setattr(tempfile, "mkdtemp", recording_mkdtemp)
    scripted_llm.add("coder", Fault.hang(8))
    coding = asyncio.Event()

    class Hooks(NullHooks):
        def emit(self, event):
            super().emit(event)
            if isinstance(event, PhaseEvent) and event.phase == "coding":
                coding.set()

    before = snapshot(project)
    task = asyncio.create_task(
        _engine(project, scripted_llm.base_url).run(RunRequest(kind="fix", workspace=project), Hooks())
    )
    waiter = asyncio.create_task(coding.wait())
    await asyncio.wait({task, waiter}, timeout=120, return_when=asyncio.FIRST_COMPLETED)
    assert coding.is_set() and not task.done()
    shadow_dirs = [p for p in made if p.name.startswith("agentls-shadow-")]
    assert len(shadow_dirs) == 1 and shadow_dirs[0].is_dir(), "the shadow exists while the run works"
    await asyncio.sleep(0.3)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert not shadow_dirs[0].exists()
    assert [p for p in made if p.exists()] == [], "no temp dir (shadow, plugin, ...) outlives the cancel"
    assert snapshot(project) == before
    run_dir = next((project / ".agentls" / "runs").iterdir())
    assert journal_records(project, run_dir.name)[-1]["status"] == "cancelled"


async def test_task_runs_plan_steps_in_dependency_order(project: Path, scripted_llm):
    scripted_llm.add(
        "planner",
        {
            "approach": "two steps",
            "subtasks": [
                {
                    "id": "t2",
                    "description": "STEP-B: make add add",
                    "priority": 5,
                    "dependencies": ["t1"],
                    "files": ["calc.py"],
                },
                {
                    "id": "t1",
                    "description": "STEP-A: document add",
                    "priority": 1,
                    "dependencies": [],
                    "files": ["calc.py"],
                },
            ],
        },
    )
    scripted_llm.add(
        "coder",
        {
            "edits": [
                {
                    "path": "calc.py",
                    "search": "def add(a, b):\n",
                    "replace": 'def add(a, b):\n    """Sum of a and b."""\n',
                }
            ]
        },
    )
    scripted_llm.add(
        "coder", {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return a + b"}]}
    )
    hooks = NullHooks()

    result = await _engine(project, scripted_llm.base_url).run(
        RunRequest(kind="task", workspace=project, goal="Make add correct and documented"), hooks
    )

    assert result.status == "ok" and result.iterations == 1, result.error
    prompts = [json.dumps(r["messages"]) for r in scripted_llm.requests_for("coder")]
    assert "STEP-A" in prompts[0] and "STEP-B" in prompts[1]
    assert "Sum of a and b" in prompts[1], "the second step sees the first step's edit"
    assert [e.message for e in hooks.events if isinstance(e, PhaseEvent) and e.phase == "coding"] == [
        "coding step 1/2",
        "coding step 2/2",
    ]
    [change] = result.change_set.changes
    assert change.path == "calc.py" and '"""Sum of a and b."""' in change.new and "a + b" in change.new
