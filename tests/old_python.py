"""A Python 3.7 venv with pytest 7.4.4 (the last pytest for 3.7), built once per machine and copied into projects.

pyenv has 3.7.16 on this machine kind; the venv is built from PyPI under ~/.cache/agentls-tests (~40 s once),
under a lock so that parallel tests build it once, and copied (symlinks kept) into each project's `.venv`.
It has no coverage.py: agentls' own needs a newer Python.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

PYTHON37 = Path.home() / ".pyenv" / "versions" / "3.7.16" / "bin" / "python3.7"
VENV_CACHE = Path.home() / ".cache" / "agentls-tests" / "venv-py3.7.16-pytest7.4.4"


def python37_venv() -> Path:
    """The cached venv, built on first use."""
    assert PYTHON37.exists(), f"this machine kind's pyenv has 3.7.16; {PYTHON37} is missing"
    VENV_CACHE.parent.mkdir(parents=True, exist_ok=True)
    with open(VENV_CACHE.parent / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (VENV_CACHE / ".complete").is_file():
            building = VENV_CACHE.with_name(VENV_CACHE.name + ".building")
            shutil.rmtree(building, ignore_errors=True)
            subprocess.run([str(PYTHON37), "-m", "venv", str(building)], check=True, timeout=300)
            subprocess.run([str(building / "bin" / "python"), "-m", "pip", "install", "-q",
                            "--disable-pip-version-check", "pytest==7.4.4"], check=True, timeout=600)
            (building / ".complete").write_text("pytest==7.4.4\n")
            shutil.rmtree(VENV_CACHE, ignore_errors=True)
            building.rename(VENV_CACHE)
    return VENV_CACHE


def copy_venv_into(project: Path) -> Path:
    """`project/.venv`, a copy of the cached 3.7 venv."""
    shutil.copytree(python37_venv(), project / ".venv", symlinks=True)
    return project / ".venv"
