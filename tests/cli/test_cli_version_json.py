"""One version source (pyproject -> package metadata -> `agentls --version`), and `sandbox doctor --json`."""

from __future__ import annotations

import importlib.metadata
import json
import os
import subprocess
import sys
import tomllib
from pathlib import Path

import agent_core
from agent_core.checks.trustprobes import TRUST_PROBES
from agent_core.cli import main as cli_main
from agent_core.sandbox.probes import PROBES

REPO = Path(__file__).resolve().parents[2]


def test_version_comes_from_pyproject_through_the_metadata() -> None:
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["version"]
    assert importlib.metadata.version("agentls") == declared == agent_core.__version__
    done = subprocess.run([sys.executable, "-m", "agent_core", "--version"], capture_output=True, text=True,
                          timeout=60, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert (done.returncode, done.stdout) == (0, f"agentls {declared}\n"), done.stderr


def test_doctor_json_reports_each_probe(tmp_path: Path, capsys) -> None:
    code = cli_main(["sandbox", "doctor", "--backend", "process", "--workspace", str(tmp_path), "--json"])
    out, err = capsys.readouterr()
    report = json.loads(out)
    assert code == 1 and report["all_hold"] is False and report["error"] is None
    assert report["backend"] == "process" and "not isolated" in report["why"]
    assert report["limits"]["memory_mb"] > 0
    assert len(report["probes"]) == len(PROBES) + len(TRUST_PROBES)
    assert {"limit", "held", "detail"} == set(report["probes"][0])
    by_limit = {p["limit"]: p["held"] for p in report["probes"]}
    assert by_limit["no network"] is False and by_limit["timeout kill"] is True
    assert "SOME LIMITS DO NOT HOLD" in err  # the human text went to stderr


def test_doctor_json_on_bad_settings_is_an_error_object(tmp_path: Path, capsys) -> None:
    (tmp_path / ".agentls.toml").write_text("[sandbox]\ntimeout_s = -1\n")
    code = cli_main(["sandbox", "doctor", "--workspace", str(tmp_path), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 2 and "sandbox.timeout_s" in report["error"] and report["probes"] == []


def test_version_answers_without_importing_the_engine() -> None:
    probe = ("import sys; from agent_core.cli import main; code = main(['--version']); "
             "heavy = sorted(m for m in ('agent_core.engine', 'langgraph', 'openai', 'docker') if m in sys.modules); "
             "print(code, heavy)")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60,
                          env={**os.environ, "PYTHONPATH": str(REPO)})
    assert done.stdout.splitlines()[-1] == "0 []", done.stdout + done.stderr


def test_a_reader_that_goes_away_gets_no_traceback(tmp_path: Path) -> None:
    # `agentls config show | head -0`: the pipe is closed before agentls writes a word.
    proc = subprocess.Popen([sys.executable, "-m", "agent_core", "config", "show", "--workspace", str(tmp_path)],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, env={**os.environ, "PYTHONPATH": str(REPO)})
    assert proc.stdout is not None and proc.stderr is not None
    proc.stdout.close()
    err = proc.stderr.read().decode()
    proc.stderr.close()
    assert proc.wait(timeout=60) == 1
    assert "Traceback" not in err and "BrokenPipeError" not in err, err
