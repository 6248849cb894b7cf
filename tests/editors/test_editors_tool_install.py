"""A pipx-style install: agentls in its own environment, found by the editor on PATH, the project's left alone.

The tool environment is a fresh venv with this checkout installed into it (a
plain, not editable, `pip install`), and PATH reaches it only through a bin
directory holding a link to its `agentls` script, as pipx's ~/.local/bin does.
The project has its own `.venv` (Debian's python3, no pip, no agentls). Neovim
0.11's native config then runs "Plan and fix" with a PATH that has neither the
test's own venv nor any other agentls: the server can only be the tool's, the
project's tests run with the project's interpreter, and the project's
environment is byte for byte what it was. The tool's `agentls sandbox doctor`
names the interpreter the sandbox ran the project's tests with.
"""

from __future__ import annotations

import hashlib
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from editors_support import HERE, MODEL, SNIPPETS, check_fixed_in_buffer_only, editor_env, run_editor, script_fix
from test_editors_neovim_native import _without_neovims_own_temp_dir, modern_nvim

pytestmark = pytest.mark.editor

REPO = Path(__file__).resolve().parents[2]
PROJECT_PYTHON = "/usr/bin/python3"  # Debian's: an interpreter outside the test's own environment


@pytest.fixture(scope="module")
def tool_bin(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A bin dir with only `agentls`, linked into a venv where this checkout is installed as a tool."""
    root = tmp_path_factory.mktemp("tool")
    venv = root / "venv"
    subprocess.run([sys.executable, "-m", "venv", str(venv)], check=True, timeout=300)
    done = subprocess.run(["nice", "-n", "19", str(venv / "bin" / "python"), "-m", "pip", "install", "-q",
                           "--disable-pip-version-check", str(REPO)],
                          capture_output=True, text=True, timeout=1800)
    assert done.returncode == 0, f"pip install of the checkout failed:\n{done.stderr[-3000:]}"
    shims = root / "bin"
    shims.mkdir()
    (shims / "agentls").symlink_to(venv / "bin" / "agentls")
    return shims


def _tree_digest(root: Path) -> str:
    digest = hashlib.sha256()
    for path in sorted(root.rglob("*")):
        digest.update(str(path.relative_to(root)).encode())
        if path.is_file() and not path.is_symlink():
            digest.update(path.read_bytes())
    return digest.hexdigest()


def _isolated_path(tool_bin: Path) -> str:
    """The tool's bin dir, then this machine's PATH without any directory holding another `agentls`."""
    keep = [d for d in os.environ.get("PATH", "").split(os.pathsep)
            if d and not os.access(os.path.join(d, "agentls"), os.X_OK) and Path(d) != Path(sys.executable).parent]
    return os.pathsep.join([str(tool_bin), *keep])


def test_neovim_finds_the_tool_install_and_leaves_the_project_environment_alone(
    tool_bin: Path, editor_workspace: Path, scripted_llm, tmp_path: Path, server_tmp: Path
):
    project_env = editor_workspace / ".venv"
    subprocess.run([PROJECT_PYTHON, "-m", "venv", "--without-pip", str(project_env)], check=True, timeout=120)
    clean = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    check = subprocess.run([str(project_env / "bin" / "python"), "-c", "import agent_core"], capture_output=True,
                           cwd=editor_workspace, env=clean)
    assert check.returncode != 0, "the project's environment must not have agentls"
    before = _tree_digest(project_env)

    script_fix(scripted_llm)
    out = tmp_path / "editor-result.json"
    env = editor_env(tmp_path, server_tmp, AGENTLS_E2E_OUT=str(out), E2E_AGENTLS_BASE_URL=scripted_llm.base_url,
                     E2E_AGENTLS_MODEL=MODEL, AGENTLS_NVIM_RTP=str(SNIPPETS / "nvim"))
    env["PATH"] = _isolated_path(tool_bin)  # editor_env put the test's own venv first: not here
    env["AGENTLS_SANDBOX__BACKEND"] = "bubblewrap"  # the backend that runs the project's own interpreter
    nvim = modern_nvim()
    run = run_editor([nvim, "--headless", "--clean", "-c", f"luafile {HERE / 'nvim011_driver.lua'}"],
                     cwd=editor_workspace, env=env)
    assert out.is_file(), f"the driver wrote no result\n{run.describe()}"
    seen = json.loads(out.read_text())
    assert "error" not in seen, f"{seen['error']}\n{run.describe()}"

    assert seen["cmd"] == ["agentls", "serve", "--stdio"]
    _without_neovims_own_temp_dir(server_tmp)
    check_fixed_in_buffer_only(seen, "\n".join(seen["buffer"]) + "\n", run, editor_workspace, scripted_llm, server_tmp)
    assert _tree_digest(project_env) == before, "the project's environment changed"
    doctor = subprocess.run(["agentls", "sandbox", "doctor", "--json", "--workspace", str(editor_workspace)],
                            capture_output=True, text=True, env=env, cwd=editor_workspace, timeout=300)
    report = json.loads(doctor.stdout)
    assert report["backend"] == "bubblewrap", report
    assert f"venv: {project_env / 'bin' / 'python'} " in report["environment"], (
        f"the project's tests do not run with the project's own interpreter: {report['environment']}"
    )
