"""`agentls mcp --http` serves only the holder of its token, and a client's roots never widen `--root`.

Any local user can reach 127.0.0.1: without a credential one could call
`run_tests` with `test_cmd: "cat secret"` as the server's user, or write a
project through `verify_patch(apply: true)`; a client declaring `file:///` as
its root could name any project on the disk.
"""

from __future__ import annotations

import json
import os
import stat
from pathlib import Path

import httpx
import pytest
from mcp.shared.exceptions import MCPError
from mcp.types import ListRootsResult, Root
from mcp_support import CALC, REPO, http_server

from mcp_server.roots import narrowed
from testkit.project_support import make_project

INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize",
              "params": {"protocolVersion": "2025-06-18", "capabilities": {},
                         "clientInfo": {"name": "probe", "version": "0"}}}
MCP_HEADERS = {"Accept": "application/json, text/event-stream", "Content-Type": "application/json"}


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def _post(url: str, authorization: str | None) -> httpx.Response:
    headers = {**MCP_HEADERS, **({"Authorization": authorization} if authorization else {})}
    return httpx.post(url, content=json.dumps(INITIALIZE), headers=headers, timeout=30)


async def _whole_disk(_ctx) -> ListRootsResult:
    return ListRootsResult(roots=[Root(uri="file:///", name="everything")])


async def test_every_request_needs_the_token_from_a_file_only_the_user_can_read(tmp_path: Path):
    code = tmp_path / "code"
    project = make_project(code / "proj", CALC)
    with http_server(tmp_path, ["--root", str(code)], _env()) as server:
        token_file = server.token_file()
        assert stat.S_IMODE(token_file.stat().st_mode) == 0o600
        assert stat.S_IMODE(token_file.parent.stat().st_mode) == 0o700
        assert server.token and len(server.token) >= 40

        for authorization in (None, "Bearer wrong-token", f"Basic {server.token}", "Bearer", f"Bearer {server.token}x"):
            refused = _post(server.url, authorization)
            assert refused.status_code == 401, (authorization, refused.text)
            assert refused.headers["www-authenticate"].startswith("Bearer")
        assert httpx.get(server.url, timeout=30).status_code == 401, "the event stream too"
        assert _post(server.url, f"Bearer {server.token}").status_code == 200

        with pytest.raises(ExceptionGroup) as no_session:  # the SDK's client without the token cannot start one
            async with server.client(None) as client:
                await client.list_tools()
        assert no_session.group_contains(MCPError)
        async with server.client() as client:
            assert {t.name for t in (await client.list_tools()).tools} >= {"run_tests", "verify_patch"}
            answered = await client.call_tool("verify_patch", {"project": str(project), "diff": "garbage"})
            assert answered.is_error and "the diff cannot be read" in answered.content[0].text
    stderr = server.process.stderr.read()
    assert f"Authorization: Bearer {server.token}" in stderr and str(token_file) in stderr
    assert not token_file.exists(), "the token file goes with the server"


async def test_a_new_token_each_start(tmp_path: Path):
    with http_server(tmp_path, [], _env()) as first:
        pass
    with http_server(tmp_path, [], _env()) as second:
        assert second.token != first.token
        assert _post(second.url, f"Bearer {first.token}").status_code == 401


async def test_no_auth_serves_anyone_and_says_so_at_start(tmp_path: Path):
    with http_server(tmp_path, ["--no-auth", "--root", str(tmp_path)], _env()) as server:
        assert _post(server.url, None).status_code == 200
        assert not server.token_file().exists()
    first = server.process.stderr.readline()
    assert "WARNING" in first and "WITHOUT authentication" in first and server.url in first


async def test_a_client_declaring_the_whole_disk_stays_inside_root(tmp_path: Path):
    code = tmp_path / "code"
    inside = make_project(code / "proj", CALC)
    outside = make_project(tmp_path / "secret", CALC)
    with http_server(tmp_path, ["--root", str(code)], _env()) as server:
        async with server.client(list_roots_callback=_whole_disk) as client:
            escaped = await client.call_tool("run_tests", {"project": str(outside), "test_cmd": "cat secret.txt"})
            assert escaped.is_error and "outside the client's roots within the server's --root" in \
                escaped.content[0].text, escaped.content
            assert str(code) in escaped.content[0].text
            kept = await client.call_tool("verify_patch", {"project": str(inside), "diff": "garbage"})
            assert kept.is_error and "the diff cannot be read" in kept.content[0].text, "--root itself still serves"


async def test_stdio_roots_narrow_root_but_never_widen_it(mcp_session, tmp_path: Path):
    bound = tmp_path / "bound"
    bound.mkdir()
    async with mcp_session(client_roots=[Path("/")], server_roots=[bound]) as s:  # the project is outside bound
        widened = await s.call("verify_patch", project=str(s.project), diff="garbage")
        assert widened.is_error and "outside the client's roots within the server's --root" in \
            widened.content[0].text, widened.content


@pytest.mark.parametrize(
    "declared, bound, allowed",
    [
        (["/"], ["/home/me/code"], ["/home/me/code"]),  # wider: cut to the bound
        (["/home/me/code/a"], ["/home/me/code"], ["/home/me/code/a"]),  # narrower: as declared
        (["/home/me/other"], ["/home/me/code"], []),  # beside it: nothing
        (["/home/me/code/a", "/home"], ["/home/me/code", "/srv"], ["/home/me/code/a", "/home/me/code"]),
        ([], ["/home/me/code"], []),
    ],
)
def test_client_roots_are_cut_to_the_server_roots(declared: list[str], bound: list[str], allowed: list[str]):
    assert narrowed([Path(p) for p in declared], [Path(p) for p in bound]) == [Path(p) for p in allowed]
