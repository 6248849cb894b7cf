"""`agentls mcp --http PORT`: streamable HTTP on loopback, its token checked, with localize and quick_fix."""

from __future__ import annotations

import os
import subprocess
import tempfile
from pathlib import Path

import anyio
from mcp_support import CALC, REPO, http_server

from testkit.project_support import make_project


async def test_http_on_loopback_serves_localize_and_quick_fix(tmp_path: Path):
    project = make_project(tmp_path / "proj", CALC)
    tmpdir = Path(tempfile.mkdtemp(prefix="agentls-mcp-tmp-"))
    tmpdir.chmod(0o1777)
    env = {**os.environ, "PYTHONPATH": str(REPO), "TMPDIR": str(tmpdir), "AGENTLS_SEARCH": "1"}
    try:
        with http_server(tmp_path, ["--root", str(tmp_path)], env) as server:
            async with server.client() as client:
                where = await client.call_tool("localize", {"project": str(project)})
                assert not where.is_error, where.content
                top = where.structured_content["suspects"][0]
                assert (top["file"], top["function"], top["lines"][0]) == ("calc.py", "add", 2)
                assert where.structured_content["evidence"] == "coverage"

                fix = await client.call_tool("quick_fix", {"project": str(project)})
                data = fix.structured_content
                assert data["found"] is True and data["change"] == "`a - b` -> `a + b`", fix.content
                assert "+    return a + b" in data["diff"] and (project / "calc.py").read_text() == CALC["calc.py"]

                outside = await client.call_tool("run_tests", {"project": str(REPO)})
                assert outside.is_error and "outside the server's --root directories" in outside.content[0].text
            with anyio.fail_after(10):
                while any(tmpdir.iterdir()):
                    await anyio.sleep(0.2)
    finally:
        for leftover in tmpdir.iterdir():
            subprocess.run(["rm", "-rf", str(leftover)], check=False)
        tmpdir.rmdir()
