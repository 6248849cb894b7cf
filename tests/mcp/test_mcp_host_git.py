"""`verify_patch` on a project whose root is laid out as a git directory: its config's filter never runs
(issue 38); the diff is judged as on any other project."""

from __future__ import annotations

import uuid
from pathlib import Path

from mcp_support import CALC, FIX_ADD


async def test_verify_patch_runs_no_filter_of_a_project_laid_out_as_a_git_directory(mcp_session, tmp_path: Path):
    marker = tmp_path / f"PWNED-{uuid.uuid4().hex}"
    attributes = tmp_path / "attributes"
    attributes.write_text("* filter=x\n")
    planted = {"HEAD": "ref: refs/heads/main\n", "objects/info/.keep": "", "refs/heads/.keep": "",
               ".gitattributes": "* filter=x\n",
               "config": (f'[core]\n\trepositoryformatversion = 0\n\tbare = true\n\tattributesFile = {attributes}\n'
                          f'[filter "x"]\n\tclean = touch {marker}\n\tsmudge = touch {marker}\n')}
    async with mcp_session({**CALC, **planted}) as s:
        result = await s.call("verify_patch", project=str(s.project), diff=FIX_ADD)
        assert not marker.exists(), "the project's git filter ran on the host"
        assert not result.is_error, result.content
        assert result.structured_content["verified"] is True, result.content
