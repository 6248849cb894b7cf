"""Emacs (batch, Debian's Emacs 28 + elpa-eglot) with the shipped eglot snippet against the real server.

`emacs --batch -l emacs_driver.el`: the snippet (editor_client/emacs/agentls.el)
registers `agentls serve --stdio` for python-mode (the venv's `agentls` is on
PATH, as after a pipx-style install) and answers the server's
workspace/configuration with `agentls-settings`; eglot attaches to calc.py,
the code actions are listed, "Plan and fix" is chosen through
`eglot-code-actions`, and the server's edit (from the scripted model, checked
by the real sandboxed test run) lands in the buffer but not on disk.
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


def test_emacs_snippet_attaches_lists_actions_and_applies_plan_and_fix(
    editor_workspace: Path, scripted_llm, tmp_path, server_tmp
):
    emacs = require_editor("emacs", "apt-get install -y --no-install-recommends emacs-nox elpa-eglot")
    seen, run = drive_fix(
        [emacs, "--batch", "-l", str(HERE / "emacs_driver.el")],
        editor_workspace,
        scripted_llm,
        tmp_path,
        server_tmp,
        AGENTLS_EMACS_SNIPPET=str(SNIPPETS / "emacs" / "agentls.el"),
        E2E_AGENTLS_HINT=HINT,
    )
    assert seen["major_mode"] == "python-mode"
    assert seen["server_command"] == ["agentls", "serve", "--stdio"]
    assert Path(seen["project_root"]) == editor_workspace
    check_fixed_in_buffer_only(seen, seen["buffer"], run, editor_workspace, scripted_llm, server_tmp)
    assert seen["report_url"].startswith("file://") and seen["report_url"].endswith("/report.html")
    report = Path(seen["report_url"].removeprefix("file://"))
    assert report.is_file() and 'id="graph"' in report.read_text(encoding="utf-8")
    check_hint_and_report(seen, scripted_llm)
