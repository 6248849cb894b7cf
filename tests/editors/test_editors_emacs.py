"""Emacs (batch, Debian's Emacs 28 + elpa-eglot) with the shipped eglot snippet against the real server.

`emacs --batch -l emacs_driver.el`: the snippet (editor_client/emacs/agentls.el)
registers `python3 -m lsp_server` for python-mode and answers the server's
workspace/configuration with `agentls-settings`; eglot attaches to calc.py,
the code actions are listed, "Plan and fix" is chosen through
`eglot-code-actions`, and the server's edit (from the scripted model, checked
by the real sandboxed test run) lands in the buffer but not on disk.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from editors_support import CALC, FIXED_CALC, HERE, MODEL, SNIPPETS, editor_env, require_editor, run_editor, leftovers, script_fix

pytestmark = pytest.mark.editor


def test_emacs_snippet_attaches_lists_actions_and_applies_plan_and_fix(editor_workspace: Path, scripted_llm, tmp_path, server_tmp):
    emacs = require_editor("emacs", "apt-get install -y --no-install-recommends emacs-nox elpa-eglot")
    script_fix(scripted_llm)
    out = tmp_path / "emacs-result.json"
    env = editor_env(
        tmp_path,
        server_tmp,
        AGENTLS_E2E_OUT=str(out),
        AGENTLS_E2E_BASE_URL=scripted_llm.base_url,
        AGENTLS_E2E_MODEL=MODEL,
        AGENTLS_EMACS_SNIPPET=str(SNIPPETS / "emacs" / "agentls.el"),
    )
    run = run_editor([emacs, "--batch", "-l", str(HERE / "emacs_driver.el")], cwd=editor_workspace, env=env)
    assert out.is_file(), f"the driver wrote no result\n{run.describe()}"
    seen = json.loads(out.read_text())
    assert "error" not in seen, f"{seen['error']}\n{run.describe()}"
    assert seen["major_mode"] == "python-mode"
    assert seen["server_command"][-2:] == ["-m", "lsp_server"] and seen["server_command"][0] == "python3"
    assert "Plan and fix" in seen["titles"] and "Generate tests" in seen["titles"]
    assert seen["edit_applied"] is True, f"the buffer never changed: {seen['buffer']!r}, {seen['messages']}\n{run.describe()}"
    assert seen["buffer"] == FIXED_CALC
    assert seen["modified"] is True
    assert (editor_workspace / "calc.py").read_text() == CALC, "the server wrote the file behind the editor's back"
    models = {r.get("model") for r in scripted_llm.requests}
    assert "coder" in {r["role"] for r in scripted_llm.requests} and models == {MODEL}, "settings did not reach the engine"
    assert seen["trace"].startswith("# Run ") and "+    return a + b" in seen["trace"], seen["trace"]
    assert len(seen["messages"]) == 1 and "): fixed" in seen["messages"][0], seen["messages"]
    assert run.returncode == 0, run.describe()
    assert leftovers(editor_workspace, server_tmp) == ([], []), "the language server outlived Emacs, or the run left temporary files behind"
