"""A project file may only tighten: a repository loosening a limit, a check or a budget is ignored with a warning.

A cloned repository's `.agentls.toml` raising `sandbox.memory_mb` or turning
`verify.goal_tests` off would weaken what protects the user without a word;
lowering a limit or turning a check on is the project's to ask.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from pydantic import BaseModel

from agent_core.settings import Settings, load_settings
from agent_core.settings.limits import LIMITS, Limit, loosens
from agent_core.settings.trust import set_trusted

# key -> (a looser value than the default, a tighter one)
CASES = {
    "sandbox.timeout_s": (3600, 60),
    "sandbox.memory_mb": (8192, 512),
    "sandbox.pids": (100000, 256),
    "sandbox.file_size_mb": (100000, 64),
    "sandbox.cpus": (8, 0.5),
    "verify.goal_tests": (False, True),
    "verify.tool_recheck": (False, True),
    "verify.verifier": (None, True),  # off by default: a project may turn it on; off is tested over a user file
    "journal": (False, True),
    "max_concurrent_runs": (32, 1),
    "samples": (10, 1),
    "max_iterations": (20, 1),
    "max_revisions": (10, 0),
    "token_budget": (None, 5000),  # 0 (none) by default: looser than any budget
    "time_budget_s": (None, 60),
    "search.budget_s": (3600, 30),
    "search.max_mutants": (5000, 10),
    "mutation.budget_s": (3600, 30),
    "mutation.max_mutants": (2000, 10),
}


def _toml(key: str, value: object) -> str:
    *table, leaf = key.split(".")
    head = f"[{'.'.join(table)}]\n" if table else ""
    return f"{head}{leaf} = {json.dumps(value)}\n"


def _env(tmp_path: Path) -> dict[str, str]:
    return {"AGENTLS_CONFIG": str(tmp_path / "home" / "config.toml")}


def _get(settings: BaseModel, key: str) -> object:
    value: object = settings
    for part in key.split("."):
        value = getattr(value, part)
    return value


def _default(key: str) -> object:
    return _get(Settings(), key)


def test_every_limit_is_a_setting_and_the_issue_s_list_is_covered():
    for key in LIMITS:
        _default(key)  # raises for a key that is no setting
    assert set(CASES) == set(LIMITS)
    assert {"sandbox.memory_mb", "sandbox.timeout_s", "sandbox.pids", "sandbox.file_size_mb", "verify.goal_tests",
            "verify.tool_recheck", "journal", "max_concurrent_runs", "samples", "max_iterations"} <= set(LIMITS)


@pytest.mark.parametrize("key", [k for k, (loose, _) in CASES.items() if loose is not None])
@pytest.mark.parametrize("where", [".agentls.toml", "pyproject.toml"])
def test_a_project_file_loosening_a_limit_is_ignored_with_a_warning_naming_the_file(tmp_path: Path, key: str,
                                                                                    where: str):
    loose = CASES[key][0]
    text = _toml(key, loose)
    if where == "pyproject.toml":
        text = "[tool.agentls]\n" + text.replace("[", "[tool.agentls.") if "[" in text else "[tool.agentls]\n" + text
    (tmp_path / where).write_text(text)
    settings = load_settings(tmp_path, env=_env(tmp_path))
    assert _get(settings, key) == _default(key), f"{key} = {loose} from the project was honoured"
    [ignored] = settings.ignored
    assert (ignored.key, ignored.value, ignored.origin) == (key, loose, str(tmp_path / where))
    [notice] = settings.notices
    assert notice.startswith(f"{tmp_path / where}: {key} = {json.dumps(loose)} ignored: a project file may only "
                             "tighten it")
    assert f"agentls config trust {tmp_path}" in notice


@pytest.mark.parametrize("key", list(CASES))
def test_a_project_file_tightening_a_limit_is_kept_without_a_word(tmp_path: Path, key: str):
    tight = CASES[key][1]
    (tmp_path / ".agentls.toml").write_text(_toml(key, tight))
    settings = load_settings(tmp_path, env=_env(tmp_path))
    assert _get(settings, key) == tight and settings.ignored == [] and settings.notices == []


def test_the_base_is_the_users_own_config_and_the_environment_and_flags_are_free(tmp_path: Path):
    user = tmp_path / "home" / "config.toml"
    user.parent.mkdir()
    user.write_text("samples = 8\n[sandbox]\nmemory_mb = 4096\n[verify]\nverifier = true\n")
    (tmp_path / ".agentls.toml").write_text("samples = 9\n[sandbox]\nmemory_mb = 2048\n[verify]\nverifier = false\n")
    settings = load_settings(tmp_path, env=_env(tmp_path))
    assert (settings.samples, settings.sandbox.memory_mb, settings.verify.verifier) == (8, 2048, True)
    assert {i.key for i in settings.ignored} == {"samples", "verify.verifier"}

    env = {**_env(tmp_path), "AGENTLS_SANDBOX__MEMORY_MB": "16384"}
    flagged = load_settings(tmp_path, {"samples": 10}, env=env)
    assert (flagged.samples, flagged.sandbox.memory_mb) == (10, 16384), "the user's environment and flags decide"


def test_a_trusted_folder_may_loosen(tmp_path: Path):
    env = _env(tmp_path)
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / ".agentls.toml").write_text("[sandbox]\nmemory_mb = 8192\n[verify]\ngoal_tests = false\n")
    set_trusted(ws, env)
    settings = load_settings(ws, env=env)
    assert (settings.sandbox.memory_mb, settings.verify.goal_tests, settings.ignored) == (8192, False, [])


@pytest.mark.parametrize(
    "limit, value, base, looser",
    [
        (Limit("lower", "x"), 10, 5, True),
        (Limit("lower", "x"), 5, 10, False),
        (Limit("lower", "x"), 5, 5, False),
        (Limit("lower", "x", zero_is_none=True), 0, 100, True),  # no budget is looser than any
        (Limit("lower", "x", zero_is_none=True), 100, 0, False),
        (Limit("lower", "x"), "lots", 5, False),  # a wrong type is validation's to report
        (Limit("lower", "x"), True, 5, False),
        (Limit("on", "x"), False, True, True),
        (Limit("on", "x"), True, False, False),
        (Limit("on", "x"), False, False, False),
    ],
)
def test_loosens(limit: Limit, value: object, base: object, looser: bool):
    assert loosens(limit, value, base) is looser


def test_config_show_lists_a_loosening_as_ignored(tmp_path: Path):
    (tmp_path / ".agentls.toml").write_text("[sandbox]\npids = 100000\n")
    shown = subprocess.run([sys.executable, "-m", "agent_core", "config", "show", str(tmp_path), "--json"],
                           capture_output=True, text=True, env={**os.environ, **_env(tmp_path)}, check=True)
    [ignored] = json.loads(shown.stdout)["ignored"]
    assert ignored["key"] == "sandbox.pids" and ignored["why"].startswith("a project file may only tighten it")
