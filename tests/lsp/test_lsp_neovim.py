"""A real editor, headless: Neovim attaches the server, runs "Plan and fix" and gets the edit.

Needs Debian's `neovim` package (0.7.2 here). The Lua script is in
tests/lsp/editor/plan_and_fix.lua; it reports what it saw as JSON.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest
from lsp_support import CALC, FIXED_CALC, REPO, make_workspace, script_fix

SCRIPT = Path(__file__).parent / "editor" / "plan_and_fix.lua"


@pytest.mark.editor
def test_neovim_plans_and_fixes_the_buffer(tmp_path: Path, scripted_llm):
    nvim = shutil.which("nvim")
    assert nvim, "Neovim is required: apt-get install -y neovim"
    script_fix(scripted_llm)
    root = make_workspace(tmp_path / "ws")
    out = tmp_path / "result.json"
    sandbox_tmp = Path(tempfile.mkdtemp(prefix="agentls-nvim-tmp-"))
    sandbox_tmp.chmod(0o1777)
    env = {
        **os.environ, "AGENTLS_NVIM_OUT": str(out), "AGENTLS_PYTHON": sys.executable, "AGENTLS_WS": str(root),
        "AGENTLS_TEST_BASE_URL": scripted_llm.base_url, "PYTHONPATH": str(REPO), "TMPDIR": str(sandbox_tmp),
    }
    try:
        proc = subprocess.run(
            [nvim, "--headless", "--clean", "-c", f"luafile {SCRIPT}", str(root / "calc.py")],
            cwd=root, env=env, capture_output=True, text=True, timeout=300,
        )
    finally:
        shutil.rmtree(sandbox_tmp, ignore_errors=True)
    assert out.exists(), f"nvim wrote no result (exit {proc.returncode}): {proc.stderr[-2000:]}"
    result = json.loads(out.read_text())
    assert result.get("error") is None, result
    assert result["titles"] == ["Plan and fix", "Plan and fix with a hint...", "Generate tests"]
    assert result["kinds"] == ["refactor.rewrite", "refactor.rewrite", "source.agentls.generateTests"]
    assert result["run_id"], result
    assert result["buffer"] == FIXED_CALC, result
    (question,) = result["questions"]  # no changeAnnotationSupport in Neovim 0.7: the server asked first
    assert question.endswith("Apply the change to calc.py?"), question
    assert result["disk_untouched"] is True and (root / "calc.py").read_text() == CALC
