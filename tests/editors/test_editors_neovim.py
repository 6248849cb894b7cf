"""Neovim (headless, Debian's 0.7) with the shipped snippet against the real server.

`nvim --headless --clean -c "luafile nvim_driver.lua" calc.py`: the snippet
(editor_client/nvim/agentls.lua) starts `python3 -m lsp_server` from the
project's venv, the code actions are listed, "Plan and fix" is chosen through
Neovim's own code-action flow, and the server's edit (built from the scripted
model's answers, checked by the real sandboxed test run) lands in the buffer
but not on disk.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editors_support import CALC, FIXED_CALC, HERE, MODEL, SNIPPETS, editor_env, require_editor, run_editor, leftovers, script_fix

pytestmark = pytest.mark.editor


def test_neovim_snippet_attaches_lists_actions_and_applies_plan_and_fix(editor_workspace: Path, scripted_llm, tmp_path, server_tmp):
    nvim = require_editor("nvim", "apt-get install -y neovim")
    script_fix(scripted_llm)
    out = tmp_path / "nvim-result.json"
    env = editor_env(
        tmp_path,
        server_tmp,
        AGENTLS_E2E_OUT=str(out),
        AGENTLS_E2E_BASE_URL=scripted_llm.base_url,
        AGENTLS_E2E_MODEL=MODEL,
        AGENTLS_NVIM_SNIPPET=str(SNIPPETS / "nvim" / "agentls.lua"),
    )
    run = run_editor([nvim, "--headless", "--clean", "-c", f"luafile {HERE / 'nvim_driver.lua'}", "calc.py"],
                     cwd=editor_workspace, env=env)
    assert out.is_file(), f"the driver wrote no result\n{run.describe()}"
    seen = json.loads(out.read_text())
    assert "error" not in seen, f"{seen['error']}\n{run.describe()}"
    assert Path(seen["root_dir"]) == editor_workspace
    assert "Plan and fix" in seen["titles"] and "Generate tests" in seen["titles"]
    assert seen["edit_applied"], f"the buffer never changed: {seen['buffer']}, {seen['messages']}\n{run.describe()}"
    assert "\n".join(seen["buffer"]) + "\n" == FIXED_CALC
    assert seen["modified"] is True
    assert (editor_workspace / "calc.py").read_text() == CALC, "the server wrote the file behind the editor's back"
    models = {r.get("model") for r in scripted_llm.requests}
    assert "coder" in {r["role"] for r in scripted_llm.requests} and models == {MODEL}, "settings did not reach the engine"
    assert seen.get("trace", "").startswith("# Run ") and "+    return a + b" in seen["trace"], seen.get("trace")
    assert len(seen["messages"]) == 1 and "): fixed" in seen["messages"][0], seen["messages"]
    assert run.returncode == 0, run.describe()
    assert leftovers(editor_workspace, server_tmp) == ([], []), "the language server outlived Neovim, or the run left temporary files behind"
