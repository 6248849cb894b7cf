"""A read-only file is never replaced on apply, and a diff over a binary or non-UTF-8 file is refused before
any test runs, with the reason (issue 38)."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.checks.diffs import DiffError, read_diff
from agent_core.models import ChangeSet
from agent_core.workspace.changeset import ChangeSetConflict, apply_change_set, file_change


def test_a_read_only_file_is_not_replaced_and_nothing_is_applied(tmp_path: Path):
    (tmp_path / "a.py").write_text("x = 1\n")
    (tmp_path / "b.py").write_text("y = 2\n")
    (tmp_path / "b.py").chmod(0o444)
    cs = ChangeSet(changes=[file_change("a.py", "x = 1\n", "x = 10\n"), file_change("b.py", "y = 2\n", "y = 20\n")])
    with pytest.raises(ChangeSetConflict, match=r"b.py is read-only \(mode 444\).*chmod u\+w.*nothing was applied"):
        apply_change_set(tmp_path, cs)
    assert (tmp_path / "a.py").read_text() == "x = 1\n" and (tmp_path / "b.py").read_text() == "y = 2\n"
    assert (tmp_path / "b.py").stat().st_mode & 0o777 == 0o444
    deletion = ChangeSet(changes=[file_change("b.py", "y = 2\n", None)])
    with pytest.raises(ChangeSetConflict, match="read-only"):
        apply_change_set(tmp_path, deletion)
    assert (tmp_path / "b.py").exists()


def test_a_diff_over_a_non_utf8_file_is_refused_with_the_reason(tmp_path: Path):
    (tmp_path / "legacy.py").write_bytes(b"# caf\xe9\nx = 1\n")
    diff = "--- a/legacy.py\n+++ b/legacy.py\n@@ -2 +2 @@\n-x = 1\n+x = 2\n"
    with pytest.raises(DiffError, match="legacy.py is not UTF-8 text"):
        read_diff(diff, tmp_path)


def test_a_binary_diff_is_refused_with_the_reason(tmp_path: Path):
    (tmp_path / "blob.bin").write_bytes(b"\x00\x01")
    diff = ("diff --git a/blob.bin b/blob.bin\nindex 1111111..2222222 100644\n"
            "Binary files a/blob.bin and b/blob.bin differ\n")
    with pytest.raises(DiffError, match="binary"):
        read_diff(diff, tmp_path)
