"""The VS Code extension's README (shown on its page) says what the extension's code does.

It names the server command's sources in serverCommand.ts's order, the
settings that restart the server (settingsChange.ts) and no others, each
palette command's title (package.json), and the untrusted-workspace stance.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

CLIENT = Path(__file__).resolve().parents[2] / "editor_client"
README = (CLIENT / "README.md").read_text(encoding="utf-8")
FLAT = " ".join(README.split())  # the README's lines are wrapped


def _ts(name: str) -> str:
    return (CLIENT / "src" / name).read_text(encoding="utf-8")


def test_server_command_sources_in_the_codes_order():
    union = re.search(r"export type ServerSource =(.*?);", _ts("serverCommand.ts"), re.S)
    assert union, "serverCommand.ts no longer declares ServerSource"
    sources = re.findall(r'"([^"]+)"', union.group(1))
    said = {
        "agentls.serverCommand": "`agentls.serverCommand` setting",
        "agentls.python": "when `agentls.python` is set",
        "agentls on PATH": "`agentls` on PATH",
        "python extension": "the interpreter selected in the Python extension",
        "default python3": "; `python3`.",
    }
    assert set(sources) == set(said), "a server source is new or gone: say it in the README"
    positions = [FLAT.find(said[source]) for source in sources]
    assert -1 not in positions and positions == sorted(positions), positions
    assert "pipx install /path/to/agentls" in FLAT  # from a checkout: agentls is not on PyPI yet


def test_only_the_server_process_settings_restart_it():
    keys = re.search(r"SERVER_PROCESS_KEYS: readonly string\[\] = \[(.*?)\]", _ts("settingsChange.ts"))
    assert keys
    for key in re.findall(r'"([^"]+)"', keys.group(1)):
        assert f"`agentls.{key}`" in FLAT
    assert "without a restart" in FLAT and "Changing a setting restarts" not in FLAT


def test_palette_titles_and_untrusted_workspaces():
    package = json.loads((CLIENT / "package.json").read_text(encoding="utf-8"))
    for command in package["contributes"]["commands"]:
        assert command["title"] in FLAT, command["title"]
    assert package["capabilities"]["untrustedWorkspaces"]["supported"] is False
    assert "off in untrusted workspaces" in FLAT
