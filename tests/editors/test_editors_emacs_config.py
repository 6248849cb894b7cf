"""The Emacs snippet in a user's eglot setup (Debian's Emacs 28 + elpa-eglot, batch).

Starts `agentls-server-command` when set, else `agentls serve --stdio` when
agentls is on PATH (a pipx-style install), else `python3 -m lsp_server`.
Serves python-mode and python-ts-mode (languageId "python" for both); keeps
the user's own installed Python server unless asked to replace it; adds its
"agentls" section to the user's eglot-workspace-configuration (a plist set
before it loads, a function set after) instead of overwriting it, for the
real agentls server started through eglot (its workspace/configuration
answer); roots a project without version control at its pyproject.toml or
.agentls.toml. Driver: emacs_config_driver.el.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
from editors_support import CALC, HERE, HINT, MODEL, SNIPPETS, editor_env, require_editor, run_editor, script_fix

pytestmark = pytest.mark.editor


def scenario(name: str, workspace: Path, tmp_path: Path, server_tmp: Path, **extra: str) -> dict:
    emacs = require_editor("emacs", "apt-get install -y --no-install-recommends emacs-nox elpa-eglot")
    out = tmp_path / f"{name}.json"
    env = editor_env(tmp_path, server_tmp, AGENTLS_E2E_OUT=str(out), AGENTLS_EMACS_SCENARIO=name,
                     AGENTLS_EMACS_SNIPPET=str(SNIPPETS / "emacs" / "agentls.el"), E2E_AGENTLS_MODEL=MODEL)
    env.update(extra)
    run = run_editor([emacs, "--batch", "-l", str(HERE / "emacs_config_driver.el")], cwd=workspace, env=env,
                     timeout=120)
    assert out.is_file(), f"the driver wrote no result\n{run.describe()}"
    seen = json.loads(out.read_text())
    assert "error" not in seen, f"{seen['error']}\n{run.describe()}"
    return seen


AGENTLS = ["agentls", "serve", "--stdio"]  # editor_env puts the venv, which has the `agentls` script, on PATH


def _path_without_agentls() -> str:
    return os.pathsep.join(d for d in os.environ.get("PATH", "").split(os.pathsep)
                           if d and not os.access(os.path.join(d, "agentls"), os.X_OK))


def test_python_mode_and_python_ts_mode_get_agentls(editor_workspace: Path, tmp_path: Path, server_tmp: Path):
    seen = scenario("fresh", editor_workspace, tmp_path, server_tmp)
    assert seen["python_mode"] == ["python-mode", "python", AGENTLS]
    assert seen["python_ts_mode"] == ["python-ts-mode", "python", AGENTLS]
    assert seen["server_class"] == "agentls-eglot-server"
    uri = (editor_workspace / "calc.py").resolve().as_uri()
    assert seen["target"] == {"uri": uri}
    line = CALC.splitlines()[1]
    assert seen["target_region"] == {"uri": uri, "range": {"start": {"line": 1, "character": 4},
                                                           "end": {"line": 1, "character": len(line)}}}


def test_the_users_own_python_server_stays(editor_workspace: Path, tmp_path: Path, server_tmp: Path):
    seen = scenario("own", editor_workspace, tmp_path, server_tmp)
    assert seen["python_mode"] == ["python-mode", "python", ["cat"]]
    assert seen["agentls_eglot_contact"] == AGENTLS
    assert seen["setup_when_replacing"] is True and seen["python_mode_replaced"][2] == AGENTLS


def test_workspace_configuration_is_merged_not_overwritten(editor_workspace: Path, tmp_path: Path, server_tmp: Path):
    seen = scenario("merge", editor_workspace, tmp_path, server_tmp)
    assert seen["kept_before"] is True
    assert seen["answer_before"] == [{"plugins": {"ruff": {"enabled": True}}}, {"model": MODEL}]
    assert seen["answer_after"] == [{"lineLength": 100}, {"model": MODEL}]
    assert seen["answer_own_section"] == [{"model": "the-users-own"}]


def test_agentls_cli_fix_works_beside_the_users_own_python_server(editor_workspace: Path, tmp_path: Path,
                                                                     server_tmp: Path, scripted_llm):
    script_fix(scripted_llm)
    seen = scenario("cli", editor_workspace, tmp_path, server_tmp, E2E_AGENTLS_HINT=HINT,
                    AGENTLS_BASE_URL=scripted_llm.base_url, AGENTLS_MODEL=MODEL, AGENTLS_MEMORY__ENABLED="false")
    assert seen["python_mode_contact"] == ["cat"], "the user's own server still serves python-mode"
    output = seen["output"]
    assert "agentls fix . --hint" in output and "fixed" in output, output[-3000:]
    assert "+    return a + b" in output and "\033[" not in output, "the diff, without colour codes"
    assert "finished" in output and "exited abnormally" not in output, output[-500:]
    prompts = [str(m.get("content")) for r in scripted_llm.requests_for("coder") for m in r.get("messages", [])]
    assert any(f"The user's hint: {HINT}" in p for p in prompts)
    assert (editor_workspace / "calc.py").read_text() == CALC, "without C-u nothing is written"


def test_a_project_without_version_control_is_rooted_at_its_pyproject(editor_workspace: Path, tmp_path: Path,
                                                                       server_tmp: Path):
    seen = scenario("project", editor_workspace, tmp_path, server_tmp)
    assert seen["vc_dirs"] == [], "the temp project must have no version control above it"
    assert seen["root_from_inner"] == seen["top"]
    assert seen["root_nearest"] == seen["top"] + "pkg/"


def test_server_command_is_the_setting_then_agentls_on_path_then_python3(
    editor_workspace: Path, tmp_path: Path, server_tmp: Path
):
    seen = scenario("command", editor_workspace, tmp_path, server_tmp, PATH=_path_without_agentls())
    assert seen["without_agentls"] == ["python3", "-m", "lsp_server"]
    assert seen["with_agentls"] == AGENTLS and seen["python_mode_with_agentls"][2] == AGENTLS
    assert seen["configured"] == ["/opt/venv/bin/python", "-m", "lsp_server"]
