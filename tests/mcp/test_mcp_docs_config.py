"""The client configurations docs/mcp.md shows start a working server, exactly as each entry says."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from mcp import Client, StdioServerParameters
from mcp_support import AGENTLS, CALC, REPO

from testkit.project_support import make_project

DOC = REPO / "docs" / "mcp.md"
BLOCK = re.compile(r"<!-- tested: (\w+) -->\n```json\n(.*?)```", re.DOTALL)


def documented() -> dict[str, dict]:
    """{format: the agentls entry} of every tested block (mcpServers: Claude/Cursor, servers: VS Code)."""
    return {fmt: json.loads(text)[fmt]["agentls"] for fmt, text in BLOCK.findall(DOC.read_text())}


async def test_both_documented_client_configurations_start_a_server_that_answers(tmp_path: Path):
    entries = documented()
    assert set(entries) == {"mcpServers", "servers"}
    assert entries["servers"]["type"] == "stdio"
    project = make_project(tmp_path / "code" / "proj", CALC)
    outside = make_project(tmp_path / "other", CALC)
    for fmt, entry in entries.items():
        assert entry["command"] == "agentls"
        pinned = {"AGENTLS_BASE_URL", "OPENAI_BASE_URL"} & set(entry.get("env", {}))
        assert not pinned, f"{fmt}: a pinned endpoint turns off the detection of Ollama and LM Studio"
        args = [arg.replace("/home/me/code", str(tmp_path / "code")) for arg in entry["args"]]
        env = {**os.environ, "PYTHONPATH": str(REPO), **entry.get("env", {})}
        params = StdioServerParameters(command=str(AGENTLS), args=args, env=env, cwd=str(tmp_path))
        async with Client(params) as client:  # declares no roots: the entry's --root applies
            assert (await client.list_tools()).tools, fmt
            refused = await client.call_tool("localize", {"project": str(outside)})
            assert refused.is_error and str(tmp_path / "code") in refused.content[0].text, (fmt, refused)
            accepted = await client.call_tool("verify_patch", {"project": str(project), "diff": "garbage"})
            assert accepted.is_error and "the diff cannot be read" in accepted.content[0].text, (fmt, accepted)
