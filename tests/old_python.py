"""Project environments from PyPI, built once per machine and copied into projects: Python 3.7 with pytest
7.4.4 (the last pytest for 3.7), Python 3.6 with pytest 3.10.1 (a 2018 pytest, with the pins its
dependencies need there), and Python 3.8 and 3.12 with pytest 8.3.5 (the last pytest for 3.8; 3.12 has
`sys.monitoring`).

pyenv has 3.6.15 and 3.7.16 on this machine kind; each venv is built under ~/.cache/agentls-tests (~40 s
once), under a lock so that parallel tests build it once, and copied (symlinks kept) into each project's
`.venv`. Neither has coverage.py: agentls' own needs a newer Python.
"""

from __future__ import annotations

import fcntl
import shutil
import subprocess
from pathlib import Path

PYENV = Path.home() / ".pyenv" / "versions"
CACHE = Path.home() / ".cache" / "agentls-tests"
ENVIRONMENTS = {  # name -> (interpreter, requirements)
    "py3.7.16-pytest7.4.4": (PYENV / "3.7.16" / "bin" / "python3.7", ["pytest==7.4.4"]),
    "py3.8.18-pytest8.3.5": (PYENV / "3.8.18" / "bin" / "python3.8", ["pytest==8.3.5"]),
    "py3.12.1-pytest8.3.5": (PYENV / "3.12.1" / "bin" / "python3.12", ["pytest==8.3.5"]),
    "py3.6.15-pytest3.10.1": (PYENV / "3.6.15" / "bin" / "python3.6", [
        "pytest==3.10.1", "pluggy==0.8.1", "py==1.11.0", "attrs==21.4.0", "more-itertools==8.5.0",
        "atomicwrites==1.4.1", "six==1.17.0"]),
}


def old_venv(name: str = "py3.7.16-pytest7.4.4") -> Path:
    """The cached venv `name` (ENVIRONMENTS), built on first use."""
    python, requirements = ENVIRONMENTS[name]
    assert python.exists(), f"this machine kind's pyenv has {python.parent.parent.name}; {python} is missing"
    venv = CACHE / f"venv-{name}"
    CACHE.mkdir(parents=True, exist_ok=True)
    with open(CACHE / ".lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if not (venv / ".complete").is_file():
            building = venv.with_name(venv.name + ".building")
            shutil.rmtree(building, ignore_errors=True)
            subprocess.run([str(python), "-m", "venv", str(building)], check=True, timeout=300)
            subprocess.run([str(building / "bin" / "python"), "-m", "pip", "install", "-q",
                            "--disable-pip-version-check", *requirements], check=True, timeout=600)
            (building / ".complete").write_text("\n".join(requirements) + "\n")
            shutil.rmtree(venv, ignore_errors=True)
            building.rename(venv)
    return venv


def copy_venv_into(project: Path, name: str = "py3.7.16-pytest7.4.4") -> Path:
    """`project/.venv`, a copy of the cached venv `name`."""
    shutil.copytree(old_venv(name), project / ".venv", symlinks=True)
    return project / ".venv"
