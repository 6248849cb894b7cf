"""Environments Poetry, hatch and pdm keep outside a project, found where those tools put them.

The tools themselves are not asked: `poetry env info`, `hatch env find` and
`pdm info` load the project's configuration, and with it code the project
chooses (Poetry's `requires-plugins`, hatch's `env.requires`, pdm's project
plugins), on the host. Each tool's own layout is read instead:

- Poetry: `{virtualenvs.path}/{name}-{hash}-py{X.Y}`, where the hash is the
  first 8 characters of the URL-safe base64 SHA-256 of the project's real
  path and `virtualenvs.path` is `POETRY_VIRTUALENVS_PATH`, else
  `{POETRY_CACHE_DIR or ~/.cache/pypoetry}/virtualenvs` (the newest wins);
- hatch: the one environment under `{HATCH_DATA_DIR or
  ~/.local/share/hatch}/env/virtual/{name}/` (none when there are several);
- pdm: the interpreter `.pdm-python` names, when it belongs to a virtual
  environment.

Only a virtual environment counts (its facts are read from `pyvenv.cfg`).
"""

from __future__ import annotations

import base64
import hashlib
import os
import re
import tomllib
from collections.abc import Mapping
from pathlib import Path

from agent_core.sandbox.pyvenv import env_dir_of, venv_python


def _pyproject(project: Path) -> dict:
    try:
        with open(project / "pyproject.toml", "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _name(data: dict) -> str:
    name = data.get("tool", {}).get("poetry", {}).get("name") or data.get("project", {}).get("name") or ""
    return name if isinstance(name, str) else ""


def _home(env: Mapping[str, str]) -> Path:
    return Path(env.get("HOME") or Path.home())


def poetry_env_name(name: str, project: Path) -> str:
    """Poetry's name for a project's environments (without the `-pyX.Y` suffix)."""
    sanitized = re.sub(r'[ $`!*@"\\\r\n\t]', "_", name.lower())[:42]
    digest = hashlib.sha256(os.path.normcase(os.path.realpath(project)).encode()).digest()
    return f"{sanitized}-{base64.urlsafe_b64encode(digest).decode()[:8]}"


def _poetry(project: Path, name: str, env: Mapping[str, str]) -> Path | None:
    if env.get("POETRY_VIRTUALENVS_PATH"):
        root = Path(env["POETRY_VIRTUALENVS_PATH"])
    else:
        cache = Path(env["POETRY_CACHE_DIR"]) if env.get("POETRY_CACHE_DIR") else (
            Path(env.get("XDG_CACHE_HOME") or _home(env) / ".cache") / "pypoetry")
        root = cache / "virtualenvs"
    found = [p for p in root.glob(f"{poetry_env_name(name, project)}-py*") if venv_python(p)]
    return max(found, key=lambda p: p.stat().st_mtime) if found else None


def _hatch(name: str, env: Mapping[str, str]) -> Path | None:
    data = Path(env["HATCH_DATA_DIR"]) if env.get("HATCH_DATA_DIR") else (
        Path(env.get("XDG_DATA_HOME") or _home(env) / ".local" / "share") / "hatch")
    normalized = re.sub(r"[-_.]+", "-", name).lower()
    found = {p for n in {name, normalized} for p in (data / "env" / "virtual" / n).glob("*/*") if venv_python(p)}
    return found.pop() if len(found) == 1 else None


def _pdm(project: Path) -> Path | None:
    try:
        named = (project / ".pdm-python").read_text(encoding="utf-8").strip()
    except OSError:
        return None
    return env_dir_of(Path(named)) if named and os.path.isabs(named) else None


def tool_environment(project: Path, env: Mapping[str, str]) -> tuple[str, str, Path] | None:
    """(kind, reason, environment dir) of an environment Poetry, hatch or pdm keeps for `project`."""
    data = _pyproject(project)
    tools = data.get("tool", {})
    name = _name(data)
    if name and ("poetry" in tools or (project / "poetry.lock").is_file()):
        if found := _poetry(project, name, env):
            return "poetry", f"Poetry's environment for {name} is {found}", found
    if name and ("hatch" in tools or (project / "hatch.toml").is_file()):
        if found := _hatch(name, env):
            return "hatch", f"hatch's environment for {name} is {found}", found
    if "pdm" in tools or (project / "pdm.lock").is_file():
        if found := _pdm(project):
            return "pdm", f".pdm-python names {found}", found
    return None
