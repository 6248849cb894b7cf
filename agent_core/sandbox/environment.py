"""The interpreter and environment a user runs their project with, as the sandbox will use it.

Detected in this order (the first that exists wins):

1. the setting `sandbox.python` (an editor passes its chosen interpreter
   through it; Neovim/Emacs users set it), a path or a name on PATH; only the
   user's own settings may set it (settings/trust.py);
2. the project's `.venv/`, then `venv/` (uv, pdm and Poetry's
   `virtualenvs.in-project` put theirs in `.venv/`; `UV_PROJECT_ENVIRONMENT`
   is honoured);
3. the environment a project tool keeps elsewhere, found where the tool puts
   it (toolenvs.py); a PEP 582 `__pypackages__/X.Y/lib` goes on PYTHONPATH;
4. the system interpreter: `python3` on PATH (a pyenv shim is asked for the
   real interpreter behind it, with the project's `.python-version` passed as
   `PYENV_VERSION` when its names are plain version names).

Nothing of the project runs on the host: a virtual environment's facts (its
prefixes, `sys.path`, whether it has pytest) are read from its `pyvenv.cfg`
and files (pyvenv.py), and its interpreter runs only inside the sandbox. Only
an interpreter outside the project that is no virtual environment (the
system's, pyenv's, one the user's own setting names) is asked on the host,
from `/`, so no file of the project can shadow a module it imports. The
sandbox binds those directories read-only and puts the environment's `bin/`
first on PATH.
"""

from __future__ import annotations

import dataclasses
import functools
import json
import os
import re
import shutil
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.pyvenv import Interpreter, env_dir_of, venv_interpreter, venv_python
from agent_core.sandbox.toolenvs import tool_environment

__all__ = ["Interpreter", "ProjectEnvironment", "ask_interpreter", "detect_environment"]

PROBE_TIMEOUT_S = 30
HOST_PATH = "/usr/local/bin:/usr/bin:/bin"
_PYENV_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._+-]*$")
_FACTS_CODE = (
    "import json, sys, importlib.util as u\n"
    "print(json.dumps({'executable': sys.executable, 'prefix': sys.prefix, 'base_prefix': sys.base_prefix,"
    " 'version': list(sys.version_info[:2]), 'path': [p for p in sys.path if p],"
    " 'missing': [n for n in ('pytest', 'hypothesis', 'coverage') if u.find_spec(n) is None]}))\n"
)


@dataclass(frozen=True)
class ProjectEnvironment:
    """The environment chosen for a project, and why."""

    kind: str  # "setting", "venv", "uv", "poetry", "hatch", "pdm", "system"
    reason: str
    interpreter: Interpreter
    extra_pythonpath: tuple[Path, ...] = field(default=())

    @property
    def python(self) -> Path:
        return self.interpreter.executable

    @property
    def bin_dir(self) -> Path:
        """The directory whose `python`, `pytest`, ... the sandbox finds first on PATH."""
        return self.python.parent

    def describe(self) -> str:
        interp = self.interpreter
        version = ".".join(map(str, interp.version))
        where = f"environment {interp.prefix}" if interp.is_venv else f"prefix {interp.prefix}"
        pytest = "its own pytest" if interp.has_pytest else "no pytest of its own"
        if interp.missing:  # what agentls adds depends on the version (envview.plan_view); `coverage:` says
            pytest += f"; lacks {', '.join(interp.missing)}"
        return f"{self.kind}: {self.python} (Python {version}, {where}, {pytest}); {self.reason}"


def pinned_pyenv_versions(project: Path | None) -> str | None:
    """The `PYENV_VERSION` a project's `.python-version` (the nearest, as pyenv looks) pins, or None: only plain
    version names count (`3.12.1`, `pypy3.10-7.3.13`, `system`), never a path."""
    for folder in ([project, *project.parents] if project is not None else []):
        try:
            text = (folder / ".python-version").read_text(encoding="utf-8", errors="replace")
        except OSError:
            continue
        names = [w for line in text.splitlines()[:20] if not line.lstrip().startswith("#") for w in line.split()]
        kept = [n for n in names if _PYENV_NAME.match(n) and ".." not in n]
        return ":".join(kept) or None
    return None


def ask_interpreter(python: str | Path, project: Path | None = None) -> Interpreter:
    """Run the host's own interpreter `python` (never a project's file) from `/` and read its facts; a pyenv
    shim gets the project's pinned version (pinned_pyenv_versions). SandboxError when it does not run."""
    env = {"PATH": os.environ.get("PATH", HOST_PATH), "LC_ALL": "C.UTF-8"}
    env.update({k: v for k, v in os.environ.items() if k in ("PYENV_ROOT", "PYENV_VERSION", "HOME")})
    pinned = pinned_pyenv_versions(project)
    if pinned and "PYENV_VERSION" not in env:
        env["PYENV_VERSION"] = pinned
    try:
        done = subprocess.run(
            [str(python), "-E", "-c", _FACTS_CODE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
            env=env, cwd="/", check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"the interpreter {python} does not run: {exc}") from exc
    if done.returncode != 0:
        raise SandboxError(f"the interpreter {python} does not run: {done.stderr.strip()[-300:]}")
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    return Interpreter(
        executable=Path(facts["executable"]), prefix=Path(facts["prefix"]),
        base_prefix=Path(facts["base_prefix"]), version=tuple(facts["version"]),
        path=tuple(Path(p) for p in facts["path"]), missing=tuple(facts["missing"]),
    )


def _inside(path: Path, project: Path | None) -> bool:
    if project is None:
        return False
    real, root = Path(os.path.realpath(path)), Path(os.path.realpath(project))
    return any(p == root or root in p.parents for p in (path.absolute(), real))


def interpreter_facts(python: Path, project: Path | None) -> Interpreter:
    """The facts of `python`: read from its virtual environment's files, or asked on the host when it is the
    host's own interpreter. A project's file that is no virtual environment's interpreter is refused."""
    env_dir = env_dir_of(python)
    if env_dir is not None:
        return dataclasses.replace(venv_interpreter(env_dir), executable=python)
    if _inside(python, project):
        raise SandboxError(f"{python} is inside the project and is no virtual environment's interpreter (no "
                           "pyvenv.cfg beside its bin/): agentls never runs a project's file on the host")
    return ask_interpreter(python, project)


def _pep582_dirs(project: Path) -> tuple[Path, ...]:
    base = project / "__pypackages__"
    return tuple(sorted(p for p in base.glob("*/lib") if p.is_dir())) if base.is_dir() else ()


def _setting_python(setting: str) -> Path:
    found = setting if os.path.isabs(setting) else shutil.which(setting)
    if not found or not (Path(found).exists() or Path(found).is_symlink()):
        raise SandboxError(f"sandbox.python is {setting!r}, which does not exist; set it to an interpreter's path")
    return Path(found)


@functools.lru_cache(maxsize=32)
def _tool_environment(project: Path) -> tuple[str, str, Path] | None:
    found = tool_environment(project, os.environ)
    if found is None:
        return None
    kind, reason, env_dir = found
    python = venv_python(env_dir)
    return (kind, reason, python) if python is not None else None


def _candidates(project: Path | None, setting: str | None) -> list[tuple[str, str, Path]]:
    if setting:
        reason = "sandbox.python is set (the editor's chosen interpreter or yours)"
        return [("setting", reason, _setting_python(setting))]
    found: list[tuple[str, str, Path]] = []
    if project is not None:
        uv_env = os.environ.get("UV_PROJECT_ENVIRONMENT")
        if uv_env:
            uv_dir = Path(uv_env) if os.path.isabs(uv_env) else project / uv_env
            if uv_python := venv_python(uv_dir):
                found.append(("uv", f"UV_PROJECT_ENVIRONMENT names {uv_dir}", uv_python))
        for name in (".venv", "venv"):
            python = venv_python(project / name)
            if python:
                found.append(("venv", f"the project has {name}/", python))
        tool_env = _tool_environment(project.resolve())
        if tool_env:
            found.append(tool_env)
    system = shutil.which("python3") or shutil.which("python3", path=HOST_PATH) or sys.executable
    found.append(("system", "no project environment (.venv/, venv/, uv, Poetry, hatch, pdm) was found", Path(system)))
    return found


def detect_environment(project: Path | None, setting: str | None = None) -> ProjectEnvironment:
    """The environment tests of `project` run with (see the module docstring)."""
    errors = []
    for kind, reason, python in _candidates(project, setting):
        try:
            interpreter = interpreter_facts(python, project)
        except SandboxError as exc:
            if kind == "setting":
                raise
            errors.append(str(exc))
            continue
        extra = _pep582_dirs(project) if project is not None and kind == "system" else ()
        if extra:
            kind, reason = "pdm", f"the project has __pypackages__/ (PEP 582), used with {python}"
        return ProjectEnvironment(kind=kind, reason=reason, interpreter=interpreter, extra_pythonpath=extra)
    raise SandboxError("no usable Python interpreter: " + "; ".join(errors))
