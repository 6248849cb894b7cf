"""What judges a run: the one test-file rule, the goal rule, and putting the protected files back."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_core.models import RunRequest
from agent_core.pipeline import protected_tests
from agent_core.pipeline.protected_tests import goal_asks_to_change_tests
from agent_core.workspace.testfiles import (
    is_protected,
    is_test_config,
    is_test_file,
    protected_files,
    restore_protected,
)
from engine_support import journal_records, snapshot


@pytest.mark.parametrize("path, test, config", [
    ("test_calc.py", True, False),
    ("pkg/calc_test.py", True, False),
    ("tests/helpers.py", True, False),
    ("test/data/expected.txt", True, False),
    ("test_data.json", True, False),
    ("calc.py", False, False),
    ("pkg/testing/runner.py", False, False),
    ("contest.py", False, False),
    ("conftest.py", False, True),
    ("tests/conftest.py", True, True),
    ("deep/pkg/conftest.py", False, True),
    ("pytest.ini", False, True),
    (".pytest.ini", False, True),
    ("pytest.toml", False, True),
    ("pyproject.toml", False, True),
    ("setup.cfg", False, True),
    ("tox.ini", False, True),
    ("sitecustomize.py", False, True),
    ("src/usercustomize.py", False, True),
    ("sitecustomize/__init__.py", False, True),
    ("lib/rig.pth", False, True),
    ("pytest.py", False, True),
    ("_pytest/runner.py", False, True),
    ("pkg/pytest.py", False, False),
    ("setup.py", False, False),
])
def test_one_rule_for_tests_and_their_configuration(path: str, test: bool, config: bool):
    assert is_test_file(path) is test and is_test_config(path) is config
    assert is_protected(path) is (test or config)


@pytest.mark.parametrize("goal, asks", [
    ("Fix the failing tests.", False),
    ("Make the failing tests pass.", False),
    ("Fix add in calc.py. Do not change the tests.", False),
    ("Fix the bug, not the test", False),
    ("change the code so that the tests pass", False),
    ("address the test failure in calc.py", False),
    ("update calc.py so test_add passes", False),
    ("Leave the tests alone, then update the test names", False),
    ("fix the failing test in test_calc.py", False),  # ambiguous: the tests stay the specification
    ("Update the test: add now subtracts on purpose", True),
    ("fix the test in test_calc.py", True),
    ("change the assertion in test_add", True),
    ("the expected value is wrong; correct the expected value", True),
    ("Add a test for mul", True),
    ("rewrite tests for calc", True),
    ("edit pytest.ini to register the slow marker", True),
    (None, False),
])
def test_the_goal_names_the_tests_or_they_stay_protected(goal: str | None, asks: bool):
    assert goal_asks_to_change_tests(goal) is asks
    assert protected_tests.tests_protected(RunRequest(kind="fix", workspace=Path("/w"), goal=goal)) is not asks
    assert not protected_tests.tests_protected(RunRequest(kind="task", workspace=Path("/w"), goal=goal))


def test_only_the_users_words_count_not_what_the_editor_adds():
    request = RunRequest(kind="fix", workspace=Path("/w"), target_file="calc.py",
                         diagnostics=["update the test: assert -1 == 5"])
    assert protected_tests.tests_protected(request)


def _tree(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def test_restore_puts_back_changed_removes_new_and_recreates_deleted(tmp_path: Path):
    root = _tree(tmp_path / "ws", {"calc.py": "x = 1\n", "test_calc.py": "def test(): pass\n",
                                   "pytest.ini": "[pytest]\n", "tests/data.txt": "1\n"})
    original = protected_files(root)
    assert sorted(original) == ["pytest.ini", "test_calc.py"], "test data is not run by the tests: not guarded"

    (root / "pytest.ini").write_text("[pytest]\naddopts = -k nothing\n")
    (root / "test_calc.py").unlink()
    _tree(root, {"pkg/deep/conftest.py": "rig\n", "sitecustomize.py": "rig\n", "x.pth": "rig\n",
                 "calc.py": "x = 2\n", "tests/data.txt": "2\n", ".venv/lib/evil.pth": "skipped dir\n"})

    changed = restore_protected(root, original)

    assert changed == ["pkg/deep/conftest.py", "pytest.ini", "sitecustomize.py", "test_calc.py", "x.pth"]
    assert protected_files(root) == original
    assert (root / "test_calc.py").read_text() == "def test(): pass\n"
    assert (root / "calc.py").read_text() == "x = 2\n", "the code under test is the candidate's"
    assert restore_protected(root, original) == []


def test_restore_never_writes_through_a_symlink(tmp_path: Path):
    outside = _tree(tmp_path / "outside", {"test_calc.py": "outside\n"})
    root = _tree(tmp_path / "ws", {"tests/test_calc.py": "def test(): pass\n"})
    original = protected_files(root)
    (root / "tests" / "test_calc.py").unlink()
    (root / "tests").rmdir()
    (root / "tests").symlink_to(outside, target_is_directory=True)
    (root / "conftest.py").symlink_to(outside / "test_calc.py")

    changed = restore_protected(root, original)

    assert changed == ["conftest.py", "tests/test_calc.py"]
    assert (outside / "test_calc.py").read_text() == "outside\n", "nothing outside the tree was touched"
    assert not (root / "tests").is_symlink() and (root / "tests" / "test_calc.py").read_text() == "def test(): pass\n"
    assert not os.path.lexists(root / "conftest.py")


DO_NOT_TOUCH = "Fix add in calc.py so that test_add passes. Do not change the tests."
EDIT_THE_TEST = {"edits": [{"path": "test_calc.py", "search": "    assert add(2, 3) == 5",
                            "replace": "    assert add(2, 3) == -1"}], "explanation": "match the code"}
PLAN = {"approach": "edit", "subtasks": [
    {"id": "t1", "description": "make test_add pass", "priority": 5, "dependencies": [], "files": ["test_calc.py"]}]}


def test_an_explicit_goal_keeps_the_tests_protected(project: Path, scripted_llm, run_fix):
    scripted_llm.default("planner", PLAN)
    scripted_llm.default("coder", EDIT_THE_TEST)
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--goal", DO_NOT_TOUCH,
                  "--max-iterations", "1", "--apply")

    assert run.code == 1, run.stderr
    assert run.json["status"] == "unfixed" and snapshot(project) == before
    refused = [r for r in journal_records(project, run.json["run_id"])
               if r["type"] == "tool_call" and r["tool"] == "edit" and not r["ok"]]
    assert refused and {r["args"]["path"] for r in refused} == {"test_calc.py"}  # once per sampled candidate
    assert "the tests are the specification" in refused[0]["result"]
    assert "(a test: the specification, do not edit)" in json.dumps(scripted_llm.requests_for("coder")[0]["messages"])


def test_a_goal_that_asks_to_change_the_test_may(project: Path, scripted_llm, run_fix):
    scripted_llm.default("planner", PLAN)
    scripted_llm.add("coder", EDIT_THE_TEST)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply",
                  "--goal", "add is meant to subtract: update the test in test_calc.py to expect -1")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["files_changed"] == ["test_calc.py"]
    assert "== -1" in (project / "test_calc.py").read_text()
