"""What the tools say about themselves and their results, through the SDK's client: titles, annotations that
match what each tool does, descriptions without the docstrings' indentation, counts that agree with the text,
and git's complaints in plain words."""

from __future__ import annotations

import re

from mcp_support import CALC


async def test_every_tool_has_a_title_honest_annotations_and_a_flush_description(mcp_session):
    async with mcp_session() as s:
        tools = {t.name: t for t in (await s.client.list_tools()).tools}

    assert all(t.title for t in tools.values()), {n: t.title for n, t in tools.items()}
    assert len({t.title for t in tools.values()}) == len(tools)
    for name in ("run_tests", "localize", "quick_fix"):
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is True and hints.open_world_hint is False, name
    patch = tools["verify_patch"].annotations
    assert patch is not None and patch.read_only_hint is False and patch.destructive_hint is True, patch
    assert patch.open_world_hint is False and patch.idempotent_hint is False
    for name in ("fix", "gen_tests"):  # they call the configured model and write the run's journal
        hints = tools[name].annotations
        assert hints is not None and hints.read_only_hint is False and hints.open_world_hint is True, (name, hints)
        assert hints.destructive_hint is False
    for name, tool in tools.items():
        lines = (tool.description or "").splitlines()
        assert lines and not any(line.startswith(" ") for line in lines), (name, tool.description)
    assert tools["fix"].description.splitlines()[1].startswith("Cancelling the call")


async def test_quick_fix_counts_agree_with_its_text(mcp_session):
    async with mcp_session(extra_env={"AGENTLS_SEARCH": "1"}) as s:  # the suite turns the search off
        found = await s.call("quick_fix", project=str(s.project))

    data, text = found.structured_content, found.content[0].text
    assert not found.is_error and data["found"] is True, text
    said = int(re.search(r"\((\d+) tests pass\)", text).group(1))
    assert data["tests"] == {"passed": said, "failed": 0, "errors": 0, "skipped": 0}, (text, data)
    assert data["baseline"] == {"passed": 1, "failed": 1, "errors": 0, "skipped": 0}
    assert (s.project / "calc.py").read_text() == CALC["calc.py"]


async def test_a_diff_git_cannot_read_is_said_without_gits_options(mcp_session):
    async with mcp_session() as s:
        result = await s.call("verify_patch", project=str(s.project), diff="not a diff at all\n")

    text = result.content[0].text
    assert result.is_error
    assert text.endswith("the diff cannot be read: no file's changes in it (a unified diff has `--- a/path`, "
                         "`+++ b/path` and `@@` hunks)"), text
    assert "allow-empty" not in text and "error: " not in text
