"""`agentls fix` as a real process against an endpoint that is down: exit 2 and a one-line cause, quickly."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from engine_support import BUGGY_CALC, make_project, snapshot


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def test_endpoint_down_exits_2_with_a_one_line_cause(tmp_path: Path):
    project = make_project(tmp_path / "proj", BUGGY_CALC)
    before = snapshot(project)
    port = _closed_port()
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "AGENTLS_API_KEY": "sk-test-SECRET-0123456789"}
    env.pop("AGENTLS_BASE_URL", None)
    started = time.monotonic()

    proc = subprocess.run(
        [sys.executable, "-m", "agent_core", "fix", str(project), "--base-url", f"http://127.0.0.1:{port}/v1",
         "--json"],
        capture_output=True, text=True, env=env, timeout=180,
    )

    elapsed = time.monotonic() - started
    assert proc.returncode == 2, proc.stderr
    out = json.loads(proc.stdout.strip().splitlines()[-1])
    assert out["status"] == "error" and f"127.0.0.1:{port}" in out["error"] and "\n" not in out["error"]
    cause = [line for line in proc.stderr.splitlines() if line.startswith("agentls: error:")]
    assert cause == [f"agentls: error: {out['error']}"]
    assert "sk-test-SECRET" not in proc.stderr + proc.stdout
    assert elapsed < 120, "well within the request timeout (connection refused is not retried for minutes)"
    assert snapshot(project) == before


def test_missing_workspace_is_bad_input(tmp_path: Path, run_fix):
    run = run_fix(str(tmp_path / "nope"), "--json")
    assert run.code == 2
    assert run.json["status"] == "error" and "is not a directory" in run.json["error"]
    assert run.stderr.strip() == f"agentls: {tmp_path / 'nope'} is not a directory"


def test_bad_configuration_is_exit_2(project: Path, run_fix):
    (project / ".agentls.toml").write_text("max_iterations = 0\n")
    run = run_fix(str(project), "--json")
    assert run.code == 2 and "max_iterations" in run.json["error"]
