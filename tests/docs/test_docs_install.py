"""The install commands the docs give fit how agentls is installed (as a pipx or uv tool, README's *Install*):
the local model server goes in with the tool's own command, as agentls' own hint says (local_model/serve.py)."""

from pathlib import Path

from agent_core.local_model.serve import LOCAL_EXTRA, install_hint

ROOT = Path(__file__).resolve().parents[2]


def test_the_local_model_doc_gives_the_tools_commands_not_a_bare_pip_install():
    doc = (ROOT / "docs" / "local-model.md").read_text(encoding="utf-8")
    assert "pip install 'agentls[local]'" not in doc
    pipx = install_hint("/root/.local/share/pipx/venvs/agentls/bin/python")
    uv = install_hint("/root/.local/share/uv/tools/agentls/bin/python")
    assert pipx in doc and pipx in (ROOT / "README.md").read_text(encoding="utf-8")
    assert f"uv tool install --reinstall --with {LOCAL_EXTRA}" in doc and uv.startswith("uv tool install")
