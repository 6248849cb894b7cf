"""Temp dirs: made with the agentls- prefix and an owner marker; leftovers of dead owners removed."""

from __future__ import annotations

import os
import stat
import subprocess
import sys
import time
from pathlib import Path

from agent_core.sandbox.cleanup import MARKER, make_temp_dir, owner_alive, remove_leftovers, remove_temp_dir
from agent_core.workspace.shadow import ShadowWorkspace


def _dead_pid() -> int:
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()
    return child.pid


def test_make_temp_dir_names_and_marks(tmp_path: Path) -> None:
    made = make_temp_dir("shadow", parent=tmp_path)
    assert made.name.startswith("agentls-shadow-") and made.parent == tmp_path
    assert (made / MARKER).read_text().split()[0] == str(os.getpid())
    assert owner_alive(made) is True


def test_remove_leftovers_only_takes_dead_or_stale_dirs(tmp_path: Path) -> None:
    live = make_temp_dir("live", parent=tmp_path)
    dead = make_temp_dir("dead", parent=tmp_path)
    (dead / MARKER).write_text(f"{_dead_pid()} 12345\n")
    (dead / "ws").mkdir()
    (dead / "ws" / "file.py").write_text("x = 1\n")
    os.chmod(dead / "ws", 0o500)  # a read-only dir left by a sandboxed test
    fresh_unmarked = tmp_path / "agentls-fresh"
    fresh_unmarked.mkdir()
    old_unmarked = tmp_path / "agentls-old"
    old_unmarked.mkdir()
    long_ago = time.time() - 7200
    os.utime(old_unmarked, (long_ago, long_ago))
    site = tmp_path / "agentls-site-0123"
    site.mkdir()
    os.utime(site, (long_ago, long_ago))
    other = tmp_path / "someone-else"
    other.mkdir()
    os.utime(other, (long_ago, long_ago))

    removed = remove_leftovers(max_age_s=3600, roots=[tmp_path])

    assert sorted(p.name for p in removed) == sorted([dead.name, "agentls-old"])
    assert not dead.exists() and not old_unmarked.exists()
    assert live.exists() and fresh_unmarked.exists() and site.exists() and other.exists()


def _mode(path: Path) -> int:
    return stat.S_IMODE(path.stat().st_mode)


def test_removing_a_dir_already_gone_leaves_the_dir_it_was_in_alone(tmp_path: Path) -> None:
    # A concurrent sweep removed it first. The remover once answered that error by
    # making the parent (the system's /tmp) 0700, locking every sandbox user out.
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    made = make_temp_dir("shadow", parent=shared)
    remove_temp_dir(made)

    remove_temp_dir(made)

    assert not made.exists() and _mode(shared) == 0o1777


def test_removing_a_tree_with_unreadable_and_read_only_dirs_removes_all_of_it(tmp_path: Path) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o755)
    made = make_temp_dir("shadow", parent=shared)
    for name, mode in (("locked", 0o000), ("read-only", 0o500)):
        (made / name / "deeper").mkdir(parents=True)
        (made / name / "deeper" / "file.py").write_text("x = 1\n")
        os.chmod(made / name, mode)
    os.chmod(made, 0o500)

    remove_temp_dir(made)

    assert not made.exists() and _mode(shared) == 0o755 and list(shared.iterdir()) == []


def test_closing_a_shadow_copy_removes_what_its_tests_locked(tmp_path: Path, monkeypatch) -> None:
    shared = tmp_path / "tmp"
    shared.mkdir()
    os.chmod(shared, 0o1777)
    monkeypatch.setattr("tempfile.tempdir", str(shared))
    project = tmp_path / "proj"
    project.mkdir()
    (project / "calc.py").write_text("x = 1\n")
    shadow = ShadowWorkspace(project).open()
    copy = shadow.root
    assert copy.parent.parent == shared
    (copy / "out" / "cache").mkdir(parents=True)  # what a sandboxed test wrote, then locked
    (copy / "out" / "cache" / "entry").write_text("1\n")
    os.chmod(copy / "out", 0o000)

    shadow.close()

    assert not copy.exists() and _mode(shared) == 0o1777 and list(shared.iterdir()) == []
