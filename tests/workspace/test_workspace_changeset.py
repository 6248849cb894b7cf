"""Change-set edits (apply them to the original to get the new text back) and all-or-nothing apply."""

from __future__ import annotations

import os
import subprocess
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


def _all_files(root: Path) -> list[str]:
    return sorted(p.relative_to(root).as_posix() for p in root.rglob("*"))


def test_a_failing_write_leaves_every_file_as_it_was(tmp_path: Path):
    """The second file cannot be staged (its parent is a file: no permission bypasses that, not even root's)."""
    ws = _ws(tmp_path)
    before = _all_files(ws)
    cs = ChangeSet(changes=[file_change("a.py", "x = 1\n", "x = 10\n"), file_change("b.py/c.py", None, "z = 1\n")])
    with pytest.raises(ChangeSetConflict, match="nothing was applied"):
        apply_change_set(ws, cs)
    assert (ws / "a.py").read_text() == "x = 1\n" and (ws / "b.py").read_text() == "y = 2\n"
    assert _all_files(ws) == before, "no temp file left"


@pytest.fixture
def immutable(tmp_path: Path):
    """`chattr +i` on a file (a rename over it fails even for root); cleared again after the test."""
    marked: list[Path] = []

    def mark(path: Path) -> None:
        subprocess.run(["chattr", "+i", str(path)], check=True)
        marked.append(path)

    yield mark
    for path in marked:
        subprocess.run(["chattr", "-i", str(path)], check=True)


def test_a_failing_rename_rolls_back_the_files_already_renamed(tmp_path: Path, immutable):
    ws = _ws(tmp_path)
    (ws / "z.py").write_text("z = 1\n")
    immutable(ws / "z.py")
    before = {p: (ws / p).read_bytes() for p in ("a.py", "b.py", "z.py")}
    inode = (ws / "a.py").stat().st_ino
    cs = ChangeSet(changes=[file_change("a.py", "x = 1\n", "x = 10\n"), file_change("b.py", "y = 2\n", None),
                            file_change("pkg/new.py", None, "n = 1\n"), file_change("z.py", "z = 1\n", "z = 2\n")])
    with pytest.raises(ChangeSetConflict, match="nothing was applied"):
        apply_change_set(ws, cs)
    assert {p: (ws / p).read_bytes() for p in before} == before
    assert (ws / "a.py").stat().st_ino == inode, "the original file itself is back"
    assert _all_files(ws) == ["a.py", "b.py", "z.py"], "no temp, side or new file or folder left"


def test_mode_and_owner_are_kept(tmp_path: Path):
    ws = _ws(tmp_path)
    target = ws / "a.py"
    target.chmod(0o640)
    if os.geteuid() == 0:  # root writes a user's file: it stays the user's
        os.chown(target, 4321, 8765)
        os.chown(ws, 4321, 8765)
    apply_change_set(ws, ChangeSet(changes=[file_change("a.py", "x = 1\n", "x = 10\n"),
                                            file_change("sub/new.py", None, "n = 1\n")]))
    st = target.stat()
    assert st.st_mode & 0o7777 == 0o640 and target.read_text() == "x = 10\n"
    if os.geteuid() == 0:
        assert (st.st_uid, st.st_gid) == (4321, 8765)
        assert ((ws / "sub").stat().st_uid, (ws / "sub/new.py").stat().st_uid) == (4321, 4321)


def test_crlf_files_stay_crlf(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "w.py").write_bytes(b"a = 1\r\nb = 2\r\n")
    (ws / "u.py").write_bytes(b"c = 1\nd = 2\n")
    cs = ChangeSet(changes=[file_change("w.py", "a = 1\r\nb = 2\r\n", "a = 1\nb = 3\nc = 4\n"),
                            file_change("u.py", "c = 1\nd = 2\n", "c = 1\nd = 3\n")])
    apply_change_set(ws, cs)
    assert (ws / "w.py").read_bytes() == b"a = 1\r\nb = 3\r\nc = 4\r\n"
    assert (ws / "u.py").read_bytes() == b"c = 1\nd = 3\n"


def test_apply_refuses_to_create_over_a_folder(tmp_path: Path):
    ws = _ws(tmp_path)
    (ws / "d.py").mkdir()
    with pytest.raises(ChangeSetConflict, match="not a regular file"):
        apply_change_set(ws, ChangeSet(changes=[file_change("a.py", "x = 1\n", "x = 10\n"),
                                                file_change("d.py", None, "d = 1\n")]))
    assert (ws / "a.py").read_text() == "x = 1\n"
