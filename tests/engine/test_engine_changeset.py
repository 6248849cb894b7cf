"""Change-set edits (apply them to the original to get the new text back) and all-or-nothing apply."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.models import ChangeSet
from agent_core.workspace.changeset import (
    ChangeSetConflict,
    apply_change_set,
    apply_text_edits,
    file_change,
    is_excluded,
    text_edits,
)

CASES = [
    ("a\nb\nc\n", "a\nB\nc\n"),
    ("a\nb\nc\n", "a\nc\n"),
    ("a\nb\nc\n", "a\nb\nx\ny\nc\n"),
    ("a\nb\nc\n", "z\na\nb\nc\n"),
    ("a\nb\nc\n", "a\nb\nc\nd\n"),
    ("a\nb\nc", "a\nb\nC"),  # no final newline
    ("a\nb\nc", "a\nb\nc\nd"),
    ("a\nb", "a\nb\n"),
    ("", "new file\n"),
    ("only\n", ""),
    ("x = 1\r\ny = 2\r\n", "x = 1\r\ny = 3\r\n"),
    ("def f():\n    return 1\n\n\ndef g():\n    return 2\n", "def f():\n    return 10\n\n\ndef g():\n    return 20\n"),
    ("héllo → wörld\n", "héllo → world\n"),
]


@pytest.mark.parametrize("original, new", CASES)
def test_edits_reproduce_the_new_text(original, new):
    edits = text_edits(original, new)
    assert apply_text_edits(original, edits) == new


def test_edits_are_minimal_and_zero_based():
    edits = text_edits("a\nb\nc\n", "a\nB\nc\n")
    assert len(edits) == 1
    e = edits[0]
    assert (e.span.start.line, e.span.start.character, e.span.end.line, e.span.end.character) == (1, 0, 2, 0)
    assert e.new_text == "B\n"


def test_end_of_text_without_newline_is_a_real_position():
    e = text_edits("a\nb", "a\nb\nc")[-1]
    assert (e.span.end.line, e.span.end.character) == (1, 1)


@pytest.mark.parametrize(
    "path, excluded",
    [(".agentls/junit-1.xml", True), ("pkg/__pycache__/a.cpython-311.pyc", True), (".pytest_cache/v", True),
     (".hypothesis/examples/x", True), ("junit.xml", True), ("pkg/a.py", False), ("data.xml", False)],
)
def test_tool_artifacts_are_excluded(path, excluded):
    assert is_excluded(path) is excluded


def _ws(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "a.py").write_text("x = 1\n")
    (ws / "b.py").write_text("y = 2\n")
    return ws


def test_apply_writes_every_change(tmp_path: Path):
    ws = _ws(tmp_path)
    cs = ChangeSet(changes=[file_change("a.py", "x = 1\n", "x = 10\n"), file_change("pkg/new.py", None, "z = 3\n"),
                            file_change("b.py", "y = 2\n", None)])
    assert apply_change_set(ws, cs) == ["a.py", "pkg/new.py", "b.py"]
    assert (ws / "a.py").read_text() == "x = 10\n" and (ws / "pkg/new.py").read_text() == "z = 3\n"
    assert not (ws / "b.py").exists()
    assert sorted(p.name for p in ws.rglob("*")) == ["a.py", "new.py", "pkg"], "no temp files left"


def test_apply_refuses_when_the_user_changed_a_file(tmp_path: Path):
    ws = _ws(tmp_path)
    (ws / "b.py").write_text("y = 'edited by the user'\n")
    cs = ChangeSet(changes=[file_change("a.py", "x = 1\n", "x = 10\n"), file_change("b.py", "y = 2\n", "y = 20\n")])
    with pytest.raises(ChangeSetConflict, match="b.py changed since the run read it"):
        apply_change_set(ws, cs)
    assert (ws / "a.py").read_text() == "x = 1\n", "all or nothing"


def test_apply_refuses_paths_outside_the_workspace(tmp_path: Path):
    ws = _ws(tmp_path)
    cs = ChangeSet(changes=[file_change("../evil.py", None, "boom\n")])
    with pytest.raises(ChangeSetConflict, match="outside the workspace"):
        apply_change_set(ws, cs)
    assert not (tmp_path / "evil.py").exists()
