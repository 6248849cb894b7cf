"""The shadow copy of a large workspace: .gitignore honoured, every file a copy of its own, change sets clean."""

from __future__ import annotations

import os
import shutil
import stat
import subprocess
from pathlib import Path

import pytest

from agent_core.workspace.changeset import compute_change_set
from agent_core.workspace.ignore import IgnoreRules
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.tools import MAX_SEARCHED_BYTES, FileTools
from agent_core.workspace.treecopy import copy_workspace

BLOB = bytes(range(256)) * 4096  # 1 MiB of binary data


def _write(root: Path, rel: str, data: str | bytes) -> Path:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(data, bytes):
        path.write_bytes(data)
    else:
        path.write_text(data)
    return path


@pytest.fixture
def workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "ws"
    files = {
        ".gitignore": "# build output\nartifacts/\n*.log\n!keep.log\ncache/\n!cache/wanted.txt\n/out\n",
        ".git/info/exclude": "local-notes.txt\n",
        "local-notes.txt": "mine\n",
        "pkg/__init__.py": "",
        "pkg/core.py": "def f():\n    return 1\n",
        "pkg/.gitignore": "generated.py\n!debug.log\n",
        "pkg/generated.py": "X = 1\n",
        "pkg/debug.log": "kept by the nested rule\n",
        "pkg/out/inner.py": "# /out is anchored at the root: this one is kept\n",
        "artifacts/model.bin": BLOB,
        "artifacts/sub/deep.py": "y = 2\n",
        "cache/wanted.txt": "a folder's rule cannot be undone inside it\n",
        "out/report.html": "<p>\n",
        "run.log": "noise\n",
        "keep.log": "wanted\n",
        "data/table.csv": "a,b\n1,2\n",
        "data/blob.bin": BLOB,
        ".venv/lib/site.py": "",
        "sub/.git": "gitdir: /elsewhere/.git/worktrees/sub\n",  # a worktree's .git file stays out as the folder does
        "tests/test_core.py": "from pkg.core import f\n\n\ndef test_f():\n    assert f() == 1\n",
    }
    for rel, data in files.items():
        _write(ws, rel, data)
    return ws


def _files(root: Path) -> set[str]:
    return {p.relative_to(root).as_posix() for p in root.rglob("*") if p.is_file() or p.is_symlink()}


def test_gitignored_paths_are_not_copied(workspace: Path):
    with ShadowWorkspace(workspace) as shadow:
        copied = _files(shadow.root)
    assert copied == {
        ".gitignore", "pkg/.gitignore", "pkg/__init__.py", "pkg/core.py", "pkg/debug.log", "pkg/out/inner.py",
        "keep.log", "data/table.csv", "data/blob.bin", "tests/test_core.py",
    }


@pytest.mark.parametrize(
    "rel, ignored",
    [
        ("artifacts/new.py", True),
        ("artifacts", True),
        ("x/y.log", True),
        ("keep.log", False),
        ("pkg/generated.py", True),
        ("pkg/debug.log", False),
        ("cache/wanted.txt", True),
        ("out/a.py", True),
        ("pkg/out/a.py", False),
        ("local-notes.txt", True),
        (".venv/x.py", True),
        ("build/lib/a.py", True),
        ("pkg/core.py", False),
        ("tests/test_new.py", False),
        ("sub/.git", True),
    ],
)
def test_rules_read_as_git_reads_them(workspace: Path, rel: str, ignored: bool):
    assert IgnoreRules(workspace).ignored(rel) is ignored


def test_ignored_files_never_appear_in_a_change_set(workspace: Path):
    with ShadowWorkspace(workspace) as shadow:
        tools = FileTools(shadow)
        ignored = ("artifacts/new.py", "debug2.log", "pkg/generated.py", "build/x.py")
        for rel in ("keep.log", "pkg/core.py"):
            assert tools.write_file(rel, "changed = True\n").ok
        for rel in ignored:
            assert not tools.write_file(rel, "changed = True\n").ok, rel  # the tools refuse them (test_..._paths)
            shadow.remember(rel)  # and a file the test run writes there is no change either
            (shadow.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (shadow.root / rel).write_text("changed = True\n")
        change_set = compute_change_set(shadow)
    assert change_set.files == ["keep.log", "pkg/core.py"]


def test_edits_in_the_shadow_never_reach_the_workspace(workspace: Path):
    before = {rel: (workspace / rel).read_bytes() for rel in ("pkg/core.py", "data/table.csv", "data/blob.bin")}
    inodes = {rel: (workspace / rel).stat().st_ino for rel in before}
    with ShadowWorkspace(workspace) as shadow:
        for rel in before:  # a file of its own: neither a hard link nor the same inode
            copy = (shadow.root / rel).stat()
            assert copy.st_ino != inodes[rel] and copy.st_nlink == 1
        tools = FileTools(shadow)
        assert tools.replace_in_file("pkg/core.py", "return 1", "return 2").ok
        assert tools.write_file("data/table.csv", "a,b\n9,9\n").ok
        with open(shadow.root / "data/blob.bin", "r+b") as handle:  # as a test run may write a data file in place
            handle.write(b"overwritten in place")
        os.chmod(shadow.root / "data/blob.bin", 0o600)
        assert (shadow.root / "data/blob.bin").read_bytes().startswith(b"overwritten")
    for rel, data in before.items():
        assert (workspace / rel).read_bytes() == data
        assert (workspace / rel).stat().st_nlink == 1
    assert stat.S_IMODE((workspace / "data/blob.bin").stat().st_mode) != 0o600


def test_copy_keeps_modes_times_and_links_and_leaves_out_special_files(tmp_path: Path):
    src = tmp_path / "src"
    script = _write(src, "bin/run.sh", "#!/bin/sh\necho hi\n")
    os.chmod(script, 0o750)
    os.utime(script, ns=(1_600_000_000_000_000_000, 1_600_000_000_123_456_789))
    os.symlink("bin/run.sh", src / "link.sh")
    os.symlink("missing", src / "dangling")
    os.mkfifo(src / "pipe")  # reading a FIFO would block the copy forever
    _write(src, "empty.txt", "")
    stats = copy_workspace(src, tmp_path / "dest")
    dest = tmp_path / "dest"
    assert stat.S_IMODE((dest / "bin/run.sh").stat().st_mode) == 0o750
    assert (dest / "bin/run.sh").stat().st_mtime_ns == 1_600_000_000_123_456_789
    assert os.readlink(dest / "link.sh") == "bin/run.sh" and os.readlink(dest / "dangling") == "missing"
    assert not (dest / "pipe").exists() and (dest / "empty.txt").read_bytes() == b""
    assert stats.skipped == 1 and stats.cloned + stats.copied == 2


def test_an_unreadable_gitignore_is_no_rule(tmp_path: Path):
    ws = tmp_path / "ws"
    _write(ws, "a.py", "x = 1\n")
    (ws / ".gitignore").mkdir()  # a folder where the file should be: read as no rules, not an error
    with ShadowWorkspace(ws) as shadow:
        assert (shadow.root / "a.py").is_file()


def _git(root: Path, *args: str) -> None:
    env = {
        **os.environ,
        "GIT_AUTHOR_NAME": "t",
        "GIT_AUTHOR_EMAIL": "t@example.com",
        "GIT_COMMITTER_NAME": "t",
        "GIT_COMMITTER_EMAIL": "t@example.com",
    }
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True, env=env)


@pytest.mark.skipif(shutil.which("git") is None, reason="needs git")
def test_a_file_git_tracks_is_copied_though_a_rule_matches_it(tmp_path: Path):
    ws = tmp_path / "ws"
    for rel, text in {
        ".gitignore": "*.json\nfixtures/\n",
        "a.py": "x = 1\n",
        "config.json": "{}\n",
        "fixtures/case.txt": "tracked\n",
        "fixtures/scratch.txt": "not tracked\n",
        "other.json": "{}\n",
    }.items():
        _write(ws, rel, text)
    _git(ws, "init", "-q")
    _git(ws, "add", ".gitignore", "a.py")
    _git(ws, "add", "-f", "config.json", "fixtures/case.txt")
    _git(ws, "commit", "-q", "-m", "init")
    with ShadowWorkspace(ws) as shadow:
        copied = _files(shadow.root)
    assert {"config.json", "fixtures/case.txt", "a.py"} <= copied
    assert not {"other.json", "fixtures/scratch.txt"} & copied


def test_search_leaves_out_files_too_big_to_read(tmp_path: Path):
    ws = tmp_path / "ws"
    _write(ws, "small.json", '{"needle": 1}\n')
    _write(ws, "dump.json", '{"needle": 2}\n' + " " * MAX_SEARCHED_BYTES)
    with ShadowWorkspace(ws) as shadow:
        result = FileTools(shadow).search("needle")
    assert result.ok and result.result == 'small.json:1: {"needle": 1}'
