"""A candidate can never rig its own verification: conftest hooks, pytest configuration, start-up hooks.

Each rig is first shown to be real (plain pytest on the buggy project passes
with it), then handed to `agentls fix` as the coder's answer: the run ends
unfixed and `--apply` writes nothing of it. The guard around the sandboxed
test run is shown on its own with a rig the code under test writes while the
tests run, which no edit check can see.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from engine_support import FIX_EDIT, journal_records, snapshot
from rigging_support import MARK_PASSED, RIGS, write_file

RIG_IDS = [r[0] for r in RIGS]


def _pytest_passes(project: Path, path: str) -> bool:
    """Plain pytest on `project` reports no failure (a .pth is read as in a site directory)."""
    run = ("import site, sys, pytest; site.addsitedir('.'); "
           "sys.exit(pytest.main(['-q', '-p', 'no:cacheprovider']))")
    env = {**os.environ, "PYTHONPATH": str(project), "PYTEST_DISABLE_PLUGIN_AUTOLOAD": "1"}
    env.pop("PYTEST_ADDOPTS", None)
    done = subprocess.run([sys.executable, "-c", run] if path.endswith(".pth") else
                          [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=120)
    return done.returncode == 0 and " passed" in done.stdout and "failed" not in done.stdout


@pytest.mark.parametrize("rig_id, path, text", [r for r in RIGS if r[1] != "usercustomize.py"],
                         ids=[i for i in RIG_IDS if i != "usercustomize.py"])  # a venv turns the user site off
def test_each_rig_is_real(project: Path, tmp_path: Path, rig_id: str, path: str, text: str):
    assert not _pytest_passes(project, path), "the bug fails the tests"
    rigged = shutil.copytree(project, tmp_path / "rigged")
    (rigged / path).write_text(text)
    assert _pytest_passes(rigged, path), f"{rig_id} makes the buggy project's tests pass"


def _refused(project: Path, run_id: str, path: str) -> list[dict]:
    return [r for r in journal_records(project, run_id)
            if r["type"] == "tool_call" and not r["ok"] and r["args"].get("path") == path]


@pytest.mark.parametrize("rig_id, path, text", RIGS, ids=RIG_IDS)
def test_a_rigged_verification_ends_unfixed_and_applies_nothing(
        project: Path, scripted_llm, run_fix, rig_id: str, path: str, text: str):
    scripted_llm.default("coder", write_file(path, text))
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "2", "--apply")

    assert run.code == 1, run.stderr
    assert run.json["status"] == "unfixed" and run.json["files_changed"] == []
    assert run.json["tests"]["failed"] == 1
    assert snapshot(project) == before, f"--apply wrote nothing of the {rig_id} rig"
    refused = _refused(project, run.json["run_id"], path)
    assert refused and "configures how the tests run" in refused[0]["result"]
    second = json.dumps(scripted_llm.requests_for("coder")[1]["messages"])
    assert f"- {path}: this file configures how the tests run" in second, "the coder hears the refusal"


def test_a_real_fix_beside_a_rig_is_fixed_and_only_the_fix_is_applied(project: Path, scripted_llm, run_fix):
    answer = write_file("conftest.py", MARK_PASSED)
    answer["edits"] += FIX_EDIT["edits"]
    scripted_llm.add("coder", answer)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["files_changed"] == ["calc.py"]
    assert not (project / "conftest.py").exists()
    assert b"return a + b" in (project / "calc.py").read_bytes()


# calc.py, when the tests import it, writes a conftest.py that marks every test passed: no edit check sees it
WRITES_RIG_WHEN_RUN = {"edits": [{"path": "calc.py", "search": "def mul(a, b):", "replace": (
    f"with open('conftest.py', 'w') as _rig:\n    _rig.write({MARK_PASSED!r})\n\n\ndef mul(a, b):")}]}


def test_a_rig_written_by_the_code_under_test_is_undone_before_the_next_test_run(
        project: Path, scripted_llm, run_fix):
    scripted_llm.default("coder", WRITES_RIG_WHEN_RUN)
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "2", "--apply")

    assert run.code == 1, run.stderr
    assert run.json["status"] == "unfixed", "the rig written in round 1 did not judge round 2"
    assert snapshot(project) == before
    refused = _refused(project, run.json["run_id"], "conftest.py")
    assert refused and refused[0]["tool"] == "guard_verification"
    assert "changed by the code during the test run" in refused[0]["result"]
    second = json.dumps(scripted_llm.requests_for("coder")[1]["messages"])
    assert "- conftest.py: changed by the code during the test run; undone" in second
