"""The client configurations docs/mcp.md shows start a working server, exactly as each entry says."""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

import httpx2
from mcp import Client, StdioServerParameters
from mcp.client.streamable_http import streamable_http_client
from mcp_support import AGENTLS, CALC, REPO, http_server

from testkit.project_support import make_project

DOC = REPO / "docs" / "mcp.md"
BLOCK = re.compile(r"<!-- tested: (\w+) -->\n```json\n(.*?)```", re.DOTALL)


def documented() -> dict[str, dict]:
    """{format: the block} of every tested block (mcpServers: Claude/Cursor, servers: VS Code, http: VS Code over
    HTTP)."""
    return {fmt: json.loads(text) for fmt, text in BLOCK.findall(DOC.read_text())}


async def test_the_documented_http_configuration_reaches_the_server_with_its_token(tmp_path: Path):
    block = documented()["http"]
    entry = block["servers"]["agentls"]
    [prompt] = block["inputs"]
    assert entry["type"] == "http" and prompt["password"] is True
    header = entry["headers"]["Authorization"]
    assert header == f"Bearer ${{input:{prompt['id']}}}"
    project = make_project(tmp_path / "code" / "proj", CALC)
    with http_server(tmp_path, ["--root", str(tmp_path / "code")], {**os.environ, "PYTHONPATH": str(REPO)}) as server:
        url = entry["url"].replace("8765", str(server.port))
        assert url == server.url
        http = httpx2.AsyncClient(headers={"Authorization": header.replace(f"${{input:{prompt['id']}}}",
                                                                           server.token or "")})
        async with Client(streamable_http_client(url, http_client=http)) as client:
            answered = await client.call_tool("verify_patch", {"project": str(project), "diff": "garbage"})
            assert answered.is_error and "the diff cannot be read" in answered.content[0].text


async def test_both_documented_client_configurations_start_a_server_that_answers(tmp_path: Path):
    entries = {fmt: block[fmt]["agentls"] for fmt, block in documented().items() if fmt != "http"}
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
