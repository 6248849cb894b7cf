"""`agentls resume`: a run killed mid-flight continues from its last checkpoint, nothing done twice."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

from agent_core.journal.lease import run_is_active
from testkit.runs_support import FIX_AFTER_WRONG, PLAN, REFLECTION, WRONG_EDIT, journal_records, run_dir
from testkit.scripted_llm import Fault


def _wait_for(predicate, proc: subprocess.Popen, timeout_s: float = 180.0) -> None:
    deadline = time.monotonic() + timeout_s
    while not predicate():
        assert proc.poll() is None, f"agentls fix exited early: {proc.communicate()}"
        assert time.monotonic() < deadline, "timed out waiting for the run to reach the reflector"
        time.sleep(0.2)


def test_resume_continues_a_killed_run_from_its_last_checkpoint(project: Path, scripted_llm, cli):
    scripted_llm.add("planner", PLAN)
    scripted_llm.add("coder", WRONG_EDIT)
    scripted_llm.add("reflector", Fault.hang(120))  # the process is killed while it waits here
    cmd = [sys.executable, "-m", "agent_core", "fix", str(project), "--base-url", scripted_llm.base_url,
           "--goal", "make add add", "--json"]
    proc = subprocess.Popen(cmd, env=dict(os.environ), stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    try:
        _wait_for(lambda: len(scripted_llm.requests_for("reflector")) == 1, proc)
        (run_id,) = [p.name for p in (project / ".agentls" / "runs").iterdir()]
        assert run_is_active(run_dir(project, run_id))
        running = cli("resume", run_id, str(project), "--json")
        assert running.code == 2 and "is running in another process" in running.stderr
        lock = json.loads((run_dir(project, run_id) / "run.lock").read_text())
    finally:
        proc.send_signal(signal.SIGKILL)
        proc.communicate(timeout=30)
    stale_shadow = Path(lock["shadow"])
    assert stale_shadow.is_dir(), "SIGKILL left the shadow copy behind"
    assert "interrupted" in cli("runs", "--workspace", str(project)).stdout

    scripted_llm.add("reflector", REFLECTION)
    scripted_llm.add("coder", FIX_AFTER_WRONG)  # applies only on top of the first, checkpointed edit
    scripted_llm.add("explainer", "add multiplied; it adds now.")
    resumed = cli("resume", run_id, str(project), "--json", "--apply")

    assert resumed.code == 0, resumed.stderr
    out = resumed.json
    assert out["status"] == "fixed" and out["run_id"] == run_id and out["iterations"] == 2
    assert out["files_changed"] == ["calc.py"]
    assert "return a + b" in (project / "calc.py").read_text(), "--apply wrote the verified change"
    counts = {role: len(scripted_llm.requests_for(role)) for role in ("planner", "coder", "reflector", "explainer")}
    expected = {"planner": 1, "coder": 2, "reflector": 2, "explainer": 1}
    assert counts == expected, "planning and the first coding round ran once"
    assert out["explanation"] == "add multiplied; it adds now."
    records = journal_records(project, run_id)
    types = [r["type"] for r in records]
    assert types.count("run_start") == 1 and types.count("run_resume") == 1 and types[-1] == "run_end"
    entered = [r["node"] for r in records if r["type"] == "node_enter"]
    assert entered.count("baseline") == 1 and entered.count("plan") == 1 and entered.count("reflect") == 2
    assert not stale_shadow.parent.exists(), "the resume removed the killed run's shadow copy"
    again = cli("resume", run_id, str(project))
    assert again.code == 2 and "nothing to resume" in again.stderr
