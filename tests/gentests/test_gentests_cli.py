"""`agentls gen-tests` as a user runs it: a real process, the scripted server, the real sandbox."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

from gentests_support import PLANTED_LINE

from testkit.project_support import journal_records
from testkit.scripted_llm import Fault


def _agentls(*args: str, cwd: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLS_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "agent_core", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=600)


def _closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _answer(name: str, body: str) -> dict:
    return {"tests": [{"name": name, "code": f"from shop import average\n\n\ndef {name}():\n{body}",
                       "kind": "pytest", "target": "average", "rationale": "documented example"}]}


def test_cli_json_apply_and_suspected_bug(scripted_llm, shop_workspace: Path):
    (shop_workspace / ".agentls.toml").write_text("[mutation]\nfollowup = false\n")
    scripted_llm.add("tester", _answer("test_average_example", "    assert average([2, 4]) == 3.0\n"))
    proc = _agentls("gen-tests", "shop.py", "--target", "average", "--apply", "--json",
                    "--base-url", scripted_llm.base_url, cwd=shop_workspace)
    assert proc.returncode == 0, proc.stderr
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert list(summary) == ["schema", "status", "tests_written", "tests_kept", "tests_dropped", "suspected_bugs",
                             "coverage", "mutation", "files_changed", "usage", "duration_s", "error", "run_id", "diff",
                             "settings_warnings"]
    assert summary["diff"].startswith("--- /dev/null\n+++ b/tests/test_shop.py\n") and summary["run_id"]
    assert summary["status"] == "ok" and summary["error"] is None
    assert (summary["tests_written"], summary["tests_kept"], summary["tests_dropped"]) == (1, 1, 0)
    assert [(b["file"], b["line"]) for b in summary["suspected_bugs"]] == [("shop.py", PLANTED_LINE)]
    assert summary["files_changed"] == ["tests/test_shop.py"]
    assert summary["usage"]["llm_calls"] == 1
    assert summary["coverage"]["before"] == 0.0 and summary["coverage"]["after"] > 0
    # the only kept test fails on the code (a suspected bug): no test kills any mutant of average
    mutation = summary["mutation"]
    assert mutation["mutants"] > 0 and (mutation["killed_before"], mutation["killed_after"]) == (0, 0)
    assert len(mutation["survivors"]) == mutation["mutants"]
    first = mutation["survivors"][0]
    assert f"{first['file']}:{first['line']}: no test notices {first['change']} here" in proc.stderr
    written = (shop_workspace / "tests" / "test_shop.py").read_text()
    assert "# agentls: suspected bug: average" in written
    assert f"shop.py:{PLANTED_LINE}:" in proc.stderr
    journal = list((shop_workspace / ".agentls" / "runs").glob("*/journal.jsonl"))
    assert journal and '"type": "llm_call"' in journal[0].read_text()


def test_cli_prints_the_diff_without_apply(scripted_llm, shop_workspace: Path):
    scripted_llm.add("tester", _answer("test_average_single", "    assert average([]) == 0.0\n"))
    proc = _agentls("gen-tests", str(shop_workspace / "shop.py"), "--target", "average",
                    "--base-url", scripted_llm.base_url, cwd=shop_workspace.parent)
    assert proc.returncode == 0, proc.stderr
    assert proc.stdout.startswith("--- /dev/null\n+++ b/tests/test_shop.py\n")
    assert "+def test_average_single():" in proc.stdout
    assert not (shop_workspace / "tests").exists()


def test_cli_bad_input_and_unreachable_endpoint(shop_workspace: Path):
    (shop_workspace / "notes.txt").write_text("hello")
    bad = _agentls("gen-tests", "notes.txt", "--json", cwd=shop_workspace)
    assert bad.returncode == 2
    assert json.loads(bad.stdout.strip().splitlines()[-1])["error"].endswith("is not a Python file")
    unknown = _agentls("gen-tests", "shop.py", "--target", "nope", "--json", "--base-url", "http://127.0.0.1:9/v1",
                       cwd=shop_workspace)
    assert unknown.returncode == 2
    assert "no function or class named 'nope'" in json.loads(unknown.stdout.strip().splitlines()[-1])["error"]
    down = _agentls("gen-tests", "shop.py", "--json", "--base-url", "http://127.0.0.1:9/v1", cwd=shop_workspace)
    assert down.returncode == 2
    summary = json.loads(down.stdout.strip().splitlines()[-1])
    assert summary["status"] == "error" and summary["error"]


def test_cli_error_from_the_endpoint_still_counts_the_calls_sent(scripted_llm, shop_workspace: Path):
    (shop_workspace / ".agentls.toml").write_text("max_retries = 1\nretry_backoff_s = 0.01\n")
    scripted_llm.default("tester", Fault.status(503))
    proc = _agentls("gen-tests", "shop.py", "--target", "average", "--json", "--base-url", scripted_llm.base_url,
                    cwd=shop_workspace)
    summary = json.loads(proc.stdout.strip().splitlines()[-1])
    assert summary["status"] == "error" and "HTTP 503" in summary["error"]
    assert len(scripted_llm.requests_for("tester")) == 2
    assert summary["usage"]["llm_calls"] == 1, "one call, sent twice, never answered"


def test_gen_tests_without_a_model_says_so_at_once_and_names_the_missing_runtime(shop_workspace: Path,
                                                                                  tmp_path: Path):
    (shop_workspace / ".agentls.toml").write_text("detect_local_servers = false\n")
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLS_", "OPENAI_"))}
    env.update(AGENTLS_MODEL_DIR=str(tmp_path / "models"), AGENTLS_MODEL_SERVER_PYTHON="/usr/bin/python3")
    started = time.monotonic()
    done = subprocess.run([sys.executable, "-m", "agent_core", "gen-tests", "shop.py", "--json"], cwd=shop_workspace,
                          env=env, capture_output=True, text=True, timeout=600)
    elapsed = time.monotonic() - started
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert done.returncode == 2 and summary["status"] == "error", done.stderr
    assert "llama-cpp-python's server is not installed in /usr/bin/python3" in summary["error"], summary["error"]
    assert "not downloaded" not in summary["error"], "the runtime first: a fetched model could not run either"
    records = journal_records(shop_workspace, summary["run_id"])
    assert not [r for r in records if r["type"] in ("test_report", "coverage")], "refused before any test run"
    assert elapsed < 60, elapsed  # an interpreter's start on a busy machine, not a baseline run
    down = _agentls("gen-tests", "shop.py", "--json", "--base-url", f"http://127.0.0.1:{_closed_port()}/v1",
                    cwd=shop_workspace)
    error = json.loads(down.stdout.strip().splitlines()[-1])["error"]
    assert down.returncode == 2 and error.endswith("unreachable: connection refused"), error

