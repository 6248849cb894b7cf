"""The copy mode's rules without an engine: which engines are local, and the tar round trip refusing escapes."""

from __future__ import annotations

import io
import tarfile
from pathlib import Path

import pytest

from agent_core.sandbox.docker.transfer import copies_workspace, engine_is_local, extract_back, workspace_tar


@pytest.mark.parametrize(
    "url, local",
    [
        ("unix:///var/run/docker.sock", True),
        ("http+unix:///home/u/.colima/default/docker.sock", True),
        ("npipe:////./pipe/docker_engine", True),
        ("tcp://127.0.0.1:2376", True),
        ("tcp://localhost:2375", True),
        ("tcp://[::1]:2376", True),
        ("tcp://build-host.example:2376", False),
        ("ssh://ci@build-host.example", False),
    ],
)
def test_engine_is_local(url: str, local: bool):
    assert engine_is_local(url) is local
    assert copies_workspace("auto", url) is (not local)
    assert copies_workspace("bind", url) is False and copies_workspace("copy", url) is True


def _engine_archive(entries: dict[str, bytes]) -> list[bytes]:
    """An archive shaped like the Engine API's: everything under the workspace's own folder name."""
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode="w") as tar:
        for name, data in entries.items():
            info = tarfile.TarInfo(name)
            info.size = len(data)
            tar.addfile(info, io.BytesIO(data))
    return [out.getvalue()]


def test_round_trip_keeps_relative_paths_and_owner(tmp_path: Path):
    src = tmp_path / "src"
    (src / "pkg").mkdir(parents=True)
    (src / "pkg" / "mod.py").write_text("x = 1\n")
    with tarfile.open(fileobj=workspace_tar(src, 65534, 65534)) as tar:
        infos = {m.name: (m.uid, m.gid) for m in tar.getmembers()}
    assert infos == {"src": (65534, 65534), "src/pkg": (65534, 65534), "src/pkg/mod.py": (65534, 65534)}


def test_extract_back_strips_the_folder_and_skips_escapes(tmp_path: Path):
    dest = tmp_path / "ws"
    dest.mkdir()
    archive = _engine_archive({"ws/report.xml": b"<testsuite/>", "ws/sub/a.txt": b"a",
                               "ws/../../escaped.txt": b"no", "ws//etc/abs.txt": b"no"})
    extract_back(archive, dest)
    assert (dest / "report.xml").read_bytes() == b"<testsuite/>" and (dest / "sub" / "a.txt").read_text() == "a"
    assert not (tmp_path / "escaped.txt").exists() and not Path("/etc/abs.txt").exists()
