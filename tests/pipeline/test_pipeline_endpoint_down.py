"""`agentls fix` as a real process against an endpoint that is down: exit 2 and a one-line cause, quickly; the
endpoint's probe at the start says so before the search, and the last line that the model was never reached."""

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
    assert cause == [f"agentls: error: {out['error']}"] and out["error"].endswith("; the model was never reached")
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


def test_a_dead_endpoint_is_said_before_the_search_and_the_last_line_says_the_model_was_never_reached(
    tmp_path: Path,
):
    project = make_project(tmp_path / "proj", BUGGY_CALC)  # a bug the search fixes: no model call is needed
    port = _closed_port()
    url = f"http://127.0.0.1:{port}/v1"
    env = {**os.environ, "XDG_CACHE_HOME": str(tmp_path / "cache"), "AGENTLS_SEARCH": "1"}
    env.pop("AGENTLS_BASE_URL", None)

    proc = subprocess.run([sys.executable, "-m", "agent_core", "fix", str(project), "--base-url", url,
                           "--set", "search.budget_s=400"],  # localizing gets its share of it on a busy machine
                          capture_output=True, text=True, env=env, timeout=900)

    assert proc.returncode == 0, proc.stderr
    lines = proc.stderr.splitlines()
    said = (f"agentls: warning: model endpoint {url} unreachable: connection refused; going on with the zero-token "
            "search")
    assert said in lines, proc.stderr
    searching = next(i for i, line in enumerate(lines) if "localizing the failure" in line)
    assert lines.index(said) < searching, "said before the search starts"
    (summary,) = [line for line in lines if line.startswith("agentls: fixed:")]
    assert summary.endswith(f"the model was never reached (model endpoint {url} unreachable: connection refused)"
                            " (not applied: rerun with --apply)"), summary


def test_a_live_endpoint_is_not_reported(tmp_path: Path, scripted_llm):
    from agent_core.llm.probe import check_endpoint
    from agent_core.settings import Settings

    assert check_endpoint(Settings(base_url=scripted_llm.base_url)).problem is None
    closed = check_endpoint(Settings(base_url=f"http://127.0.0.1:{_closed_port()}/v1"))
    assert (closed.problem, closed.certain) == ("connection refused", True)
