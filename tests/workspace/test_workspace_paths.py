"""The path guard and the file tools: nothing outside the workspace, symlinks included."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from agent_core.workspace.paths import PathRefused, resolve_inside
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.tools import FileTools


@pytest.fixture
def ws(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "pkg").mkdir(parents=True)
    (root / "pkg" / "a.py").write_text("x = 1\n")
    (tmp_path / "secret.txt").write_text("outside\n")
    os.symlink(tmp_path / "secret.txt", root / "link_out.txt")
    os.symlink(tmp_path, root / "dir_out")
    os.symlink("pkg/a.py", root / "link_in.py")
    return root


@pytest.mark.parametrize("path", ["pkg/a.py", "./pkg/a.py", "pkg//a.py", "new/file.py",
                                  "link_in.py"])
def test_paths_inside_are_allowed(ws: Path, path: str):
    assert ws.resolve() in resolve_inside(ws, path).parents


@pytest.mark.parametrize(
    "path, why",
    [
        ("../secret.txt", "'..' is not allowed"),
        ("pkg/../../secret.txt", "'..' is not allowed"),
        ("/etc/passwd", "outside the workspace"),
        ("link_out.txt", "symlink"),
        ("dir_out/secret.txt", "symlink"),
        ("", "empty path"),
        ("a\x00b", "NUL"),
    ],
)
def test_paths_outside_are_refused(ws: Path, path: str, why: str):
    with pytest.raises(PathRefused, match=why.replace("(", r"\(").replace(")", r"\)")):
        resolve_inside(ws, path)


def test_absolute_path_inside_is_allowed(ws: Path):
    assert resolve_inside(ws, str(ws / "pkg" / "a.py")) == (ws / "pkg" / "a.py").resolve()


def test_tools_refuse_as_data_and_touch_nothing_outside(ws: Path):
    calls = []
    with ShadowWorkspace(ws) as shadow:
        tools = FileTools(shadow, lambda tool, args, result: calls.append((tool, result.ok)))
        assert not tools.write_file("../x.txt", "boom").ok
        assert not tools.write_file("link_out.txt", "boom").ok
        assert not tools.delete_file("/etc/hostname").ok
        assert not tools.read_file("link_out.txt").ok
        bad = tools.replace_in_file("pkg/a.py", "x = 2", "x = 3")
        assert not bad.ok and "not found" in bad.result and "x = 1" in bad.result
        assert tools.replace_in_file("pkg/a.py", "x = 1", "x = 3").ok
        assert tools.read_file("pkg/a.py").result == "x = 3\n"
        assert "pkg/a.py" in tools.search(r"x = \d").result
        assert "pkg/a.py" in tools.list_files().result.splitlines()
    assert (ws.parent / "secret.txt").read_text() == "outside\n"
    assert not (ws.parent / "x.txt").exists() and (ws / "pkg" / "a.py").read_text() == "x = 1\n"
    assert [ok for _, ok in calls][:5] == [False] * 5


def test_shadow_copy_skips_caches_applies_overlays_and_is_removed(ws: Path):
    (ws / ".venv" / "lib").mkdir(parents=True)
    (ws / ".venv" / "lib" / "big.py").write_text("")
    (ws / "pkg" / "__pycache__").mkdir()
    with ShadowWorkspace(ws, {"pkg/a.py": "x = 'unsaved'\n"}) as shadow:
        root = shadow.root
        assert root.name.startswith("ws") and root.parent.name.startswith("agentls-")
        assert not (root / ".venv").exists() and not (root / "pkg" / "__pycache__").exists()
        assert (root / "pkg" / "a.py").read_text() == "x = 'unsaved'\n"
        assert shadow.originals == {"pkg/a.py": "x = 'unsaved'\n"}
    assert not root.parent.exists()
    assert (ws / "pkg" / "a.py").read_text() == "x = 1\n"


def test_shadow_is_removed_when_the_block_raises(ws: Path):
    with pytest.raises(RuntimeError), ShadowWorkspace(ws) as shadow:
        root = shadow.root
        raise RuntimeError("crash")
    assert not root.parent.exists()


def test_tools_refuse_writes_the_copy_leaves_out(ws: Path):
    """A fix written where no change set reaches (an ignored module, a `.venv`) must not make a run green."""
    (ws / ".gitignore").write_text("local_*.py\nbuild/\n")
    (ws / "local_a.py").write_text("x = 1\n")
    with ShadowWorkspace(ws) as shadow:
        tools = FileTools(shadow)
        for path in ("local_a.py", "build/a.py", ".venv/lib/python3.11/site-packages/a.py", ".git/hooks/pre-commit"):
            result = tools.write_file(path, "x = 2\n")
            assert not result.ok and "left out of the project's copy" in result.result, (path, result)
            assert not (shadow.root / path).exists(), path
        assert not tools.replace_in_file("local_a.py", "x = 1", "x = 2").ok
        assert not tools.delete_file("build/a.py").ok
        assert tools.write_file("pkg/b.py", "y = 1\n").ok, "the project's own files stay writable"
        assert shadow.originals.keys() == {"pkg/b.py"}
    assert (ws / "local_a.py").read_text() == "x = 1\n" and not (ws / "pkg" / "b.py").exists()
