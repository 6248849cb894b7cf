"""`run_tests` over stdio on a project whose venv is another Python; the runs as resources; the roots."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from mcp_support import CALC

PYENV = Path.home() / ".pyenv" / "versions"
VERSION_TEST = ("import sys\n\n\ndef test_version():\n    print('python', sys.version_info[:2])\n"
                "    assert sys.version_info[:2] == (3, 12)\n")


def _python_312() -> Path:
    found = sorted(PYENV.glob("3.12.*/bin/python3"))
    assert found, f"this machine kind's pyenv has 3.12 ({PYENV}); none was found"
    return found[0]


async def test_run_tests_uses_the_project_venv_of_another_python_and_reports_each_test(mcp_session):
    files = {**CALC, "tests/test_version.py": VERSION_TEST}
    async with mcp_session(files) as s:
        subprocess.run([str(_python_312()), "-m", "venv", "--without-pip", str(s.project / ".venv")], check=True)
        result = await s.call("run_tests", project=str(s.project))
        assert not result.is_error, result.content
        data = result.structured_content
        assert data["environment"]["interpreter"] == str(s.project / ".venv" / "bin" / "python")
        assert data["environment"]["python_version"] == "3.12" and data["environment"]["kind"] == "venv"
        assert data["environment"]["backend"] == "bubblewrap"
        assert data["outcomes"] == [
            {"nodeid": "tests/test_calc.py::test_add", "outcome": "failed"},
            {"nodeid": "tests/test_calc.py::test_mul", "outcome": "passed"},
            {"nodeid": "tests/test_version.py::test_version", "outcome": "passed"},
        ]
        failure = data["failures"][0]
        assert (failure["nodeid"], failure["file"], failure["line"]) == ("tests/test_calc.py::test_add",
                                                                         "tests/test_calc.py", 5)
        assert "assert -1 == 5" in failure["message"] and data["tests"]["failed"] == 1

        chosen = await s.call("run_tests", project=str(s.project), tests=["tests/test_calc.py::test_mul"])
        assert chosen.structured_content["outcomes"] == [{"nodeid": "tests/test_calc.py::test_mul",
                                                          "outcome": "passed"}]
        assert chosen.structured_content["ok"] is True

        listed = json.loads((await s.client.read_resource("agentls://runs")).contents[0].text)
        assert [r["run_id"] for r in listed[:2]] == [chosen.structured_content["run_id"], data["run_id"]]
        journal = (await s.client.read_resource(f"agentls://runs/{data['run_id']}")).contents[0].text
        assert data["run_id"] in journal and "test_add" in journal


async def test_a_project_outside_the_client_roots_is_refused(mcp_session, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with mcp_session(client_roots=[elsewhere]) as s:  # the server's --root (tmp_path) holds it; the client's not
        result = await s.call("run_tests", project=str(s.project))
        assert result.is_error and "outside the client's roots" in result.content[0].text
        (elsewhere / "link").symlink_to(s.project)
        linked = await s.call("verify_patch", project=str(elsewhere / "link"), diff="x")
        assert linked.is_error and "outside the client's roots" in linked.content[0].text
        assert not (s.project / ".agentls").exists(), "nothing ran, no journal was written"


async def test_without_client_roots_the_server_roots_apply(mcp_session, tmp_path: Path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    async with mcp_session(server_roots=[elsewhere]) as s:
        result = await s.call("localize", project=str(s.project))
        assert result.is_error and "outside the server's --root directories" in result.content[0].text
        relative = await s.call("run_tests", project="proj")
        assert relative.is_error and "absolute path" in relative.content[0].text
