"""Neovim (headless, Debian's 0.7) with the shipped snippet against the real server.

`nvim --headless --clean -c "luafile nvim_driver.lua" calc.py`: the snippet
(editor_client/nvim/agentls.lua) starts `python3 -m lsp_server` from the
project's venv, the code actions are listed, "Plan and fix" is chosen through
Neovim's own code-action flow, and the server's edit (built from the scripted
model's answers, checked by the real sandboxed test run) lands in the buffer
but not on disk.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from editors_support import (
    HERE,
    HINT,
    SNIPPETS,
    check_fixed_in_buffer_only,
    check_hint_and_report,
    drive_fix,
    require_editor,
)

pytestmark = pytest.mark.editor


def test_neovim_snippet_attaches_lists_actions_and_applies_plan_and_fix(
    editor_workspace: Path, scripted_llm, tmp_path, server_tmp
):
    nvim = require_editor("nvim", "apt-get install -y neovim")
    seen, run = drive_fix(
        [nvim, "--headless", "--clean", "-c", f"luafile {HERE / 'nvim_driver.lua'}", "calc.py"],
        editor_workspace,
        scripted_llm,
        tmp_path,
        server_tmp,
        AGENTLS_NVIM_SNIPPET=str(SNIPPETS / "nvim" / "agentls.lua"),
        E2E_AGENTLS_HINT=HINT,
    )
    assert Path(seen["root_dir"]) == editor_workspace
    check_fixed_in_buffer_only(seen, "\n".join(seen["buffer"]) + "\n", run, editor_workspace, scripted_llm, server_tmp)
    check_hint_and_report(seen, scripted_llm)
