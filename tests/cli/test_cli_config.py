"""`agentls config show`: the effective settings and the layer each came from, keys masked; run as a user would."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path


def _agentls(args: list[str], cwd: Path, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("AGENTLS_", "OPENAI_"))}
    return subprocess.run([sys.executable, "-m", "agent_core", *args], cwd=cwd, env={**base, **env},
                          capture_output=True, text=True, timeout=60)


def _workspace(tmp_path: Path) -> tuple[Path, Path]:
    user = tmp_path / "user.toml"
    user.write_text('temperature = 0.5\nmodel = "user"\n')
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text('[tool.agentls]\nmodel = "from-pyproject"\n')
    (ws / ".agentls.toml").write_text("[sandbox]\ntimeout_s = 9\n")
    return user, ws


def test_config_show_json_names_each_source_and_masks_the_key(tmp_path: Path):
    user, ws = _workspace(tmp_path)
    env = {"AGENTLS_CONFIG": str(user), "AGENTLS_SANDBOX__BACKEND": "process", "OPENAI_API_KEY": "sk-very-secret"}
    done = _agentls(["config", "show", "--json", "--set", "samples=2"], ws, env)
    assert done.returncode == 0, done.stderr
    assert "sk-very-secret" not in done.stdout + done.stderr
    rows = {row["key"]: row for row in json.loads(done.stdout)["settings"]}
    seen = {key: (rows[key]["value"], rows[key]["source"]) for key in
            ("max_iterations", "temperature", "model", "sandbox.timeout_s", "sandbox.backend", "samples", "api_key")}
    assert seen == {"max_iterations": (3, "default"), "temperature": (0.5, "user file"),
                    "model": ("from-pyproject", "pyproject"), "sandbox.timeout_s": (9.0, ".agentls.toml"),
                    "sandbox.backend": ("process", "env"), "samples": (2, "flag"), "api_key": ("***", "env")}
    assert rows["sandbox.backend"]["origin"] == "AGENTLS_SANDBOX__BACKEND"
    assert rows["api_key"]["origin"] == "OPENAI_API_KEY"
    assert rows["temperature"]["origin"] == str(user)


def test_config_show_text_and_a_bad_value(tmp_path: Path):
    user, ws = _workspace(tmp_path)
    done = _agentls(["config", "show"], ws, {"AGENTLS_CONFIG": str(user)})
    assert done.returncode == 0, done.stderr
    line = next(line for line in done.stdout.splitlines() if line.startswith("model "))
    assert '"from-pyproject"' in line and f"[pyproject ({ws / 'pyproject.toml'})]" in line
    bad = _agentls(["config", "show"], ws, {"AGENTLS_CONFIG": str(user), "AGENTLS_SANDBOX__PIDS": "2"})
    assert bad.returncode == 2
    assert "sandbox.pids" in bad.stderr and "Traceback" not in bad.stderr


def test_config_schema_is_the_committed_file(tmp_path: Path):
    done = _agentls(["config", "schema"], tmp_path, {})
    committed = Path(__file__).resolve().parents[2] / "agent_core" / "settings.schema.json"
    assert done.returncode == 0 and done.stdout == committed.read_text(encoding="utf-8")


def test_the_user_file_lives_in_the_platform_config_dir(tmp_path: Path):
    """Without AGENTLS_CONFIG the user file is platformdirs' user config dir (XDG_CONFIG_HOME on Linux)."""
    xdg = tmp_path / "xdg"
    (xdg / "agentls").mkdir(parents=True)
    (xdg / "agentls" / "config.toml").write_text("max_revisions = 5\n")
    env = {"XDG_CONFIG_HOME": str(xdg)}
    where = _agentls(["config", "path"], tmp_path, env)
    assert where.stdout.strip() == str(xdg / "agentls" / "config.toml")
    rows = {row["key"]: row for row in json.loads(_agentls(["config", "show", "--json"], tmp_path, env).stdout)["settings"]}
    assert (rows["max_revisions"]["value"], rows["max_revisions"]["source"]) == (5, "user file")
    assert rows["max_revisions"]["origin"] == str(xdg / "agentls" / "config.toml")
