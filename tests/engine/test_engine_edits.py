"""Applying coder edits: exact first, then forgiving only about whitespace, never guessing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.pipeline.edits import apply_edits, loose_match
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.tools import FileTools

SOURCE = "class A:\n    def f(self, x):\n        if x:\n            return x - 1\n        return 0\n"


@pytest.mark.parametrize(
    "search, replace, expected",
    [
        # the model dropped the indentation
        ("if x:\n    return x - 1", "if x:\n    return x + 1",
         SOURCE.replace("x - 1", "x + 1")),
        # trailing spaces in the search block
        ("            return x - 1   ", "            return x + 1", SOURCE.replace("x - 1", "x + 1")),
        # indented too deep by four
        ("                return x - 1", "                return x + 2", SOURCE.replace("x - 1", "x + 2")),
    ],
)
def test_whitespace_mismatches_are_forgiven(search, replace, expected):
    segment, new = loose_match(SOURCE, search, replace)
    assert SOURCE.replace(segment, new, 1) == expected


@pytest.mark.parametrize(
    "search",
    ["return y - 1", "return 0\nreturn 0", "", "   \n  "],
)
def test_no_or_ambiguous_match_is_not_guessed(search):
    assert loose_match(SOURCE + SOURCE.replace("x - 1", "y"), search, "z") is None


def test_apply_edits_reports_what_failed(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "m.py").write_text(SOURCE)
    with ShadowWorkspace(ws) as shadow:
        tools = FileTools(shadow)
        output = CoderOutput(edits=[
            Edit(path="m.py", search="if x:\n    return x - 1", replace="if x:\n    return x + 1"),
            Edit(path="m.py", search="return nothing", replace="x"),
            Edit(path="new.py", search="", replace="y = 1\n"),
        ])
        applied, errors = apply_edits(tools, output)
        assert applied == 2 and len(errors) == 1 and "not found" in errors[0]
        assert (shadow.root / "m.py").read_text() == SOURCE.replace("x - 1", "x + 1")
        assert (shadow.root / "new.py").read_text() == "y = 1\n"
        assert apply_edits(tools, CoderOutput(edits=[])) == (0, ["- the answer contained no edits"])


def test_relative_indentation_of_the_replacement_is_kept():
    segment, new = loose_match(SOURCE, "if x:\n    return x - 1", "if x:\n    return x + 1\nreturn -1")
    assert new == "        if x:\n            return x + 1\n        return -1\n"
