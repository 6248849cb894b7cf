"""The interpreter and environment a user runs their project with, as the sandbox will use it.

Detected in this order (the first that exists wins):

1. the setting `sandbox.python` (an editor passes its chosen interpreter
   through it; Neovim/Emacs users set it), a path or a name on PATH;
2. the project's `.venv/`, then `venv/` (uv, pdm and Poetry's
   `virtualenvs.in-project` put theirs in `.venv/`; `UV_PROJECT_ENVIRONMENT`
   is honoured);
3. the environment a project tool manages elsewhere, asked from the tool when
   it is on PATH: `poetry env info -p`, `hatch env find`, `pdm info --python`;
   a PEP 582 `__pypackages__/X.Y/lib` goes on PYTHONPATH;
4. the system interpreter: `python3` on PATH (a pyenv shim is asked for the
   real interpreter behind it).

The chosen interpreter is then asked (on the host) for its prefixes, its
`sys.path` and whether it has pytest: the sandbox binds those directories
read-only and puts the environment's `bin/` first on PATH.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.sandbox.base import SandboxError

PROBE_TIMEOUT_S = 30
HOST_PATH = "/usr/local/bin:/usr/bin:/bin"
_FACTS_CODE = (
    "import json, sys, importlib.util as u\n"
    "print(json.dumps({'executable': sys.executable, 'prefix': sys.prefix, 'base_prefix': sys.base_prefix,"
    " 'version': list(sys.version_info[:2]), 'path': [p for p in sys.path if p],"
    " 'missing': [n for n in ('pytest', 'hypothesis', 'coverage') if u.find_spec(n) is None]}))\n"
)


@dataclass(frozen=True)
class Interpreter:
    """What an interpreter says about itself (asked on the host)."""

    executable: Path
    prefix: Path
    base_prefix: Path
    version: tuple[int, int]
    path: tuple[Path, ...]
    missing: tuple[str, ...]  # test distributions agentls uses (pytest, hypothesis, coverage) it lacks

    @property
    def has_pytest(self) -> bool:
        return "pytest" not in self.missing

    @property
    def is_venv(self) -> bool:
        return self.prefix != self.base_prefix


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


def ask_interpreter(python: str | Path, cwd: Path | None = None) -> Interpreter:
    """Run `python` on the host (in `cwd`: a pyenv shim picks the project's `.python-version` there) and read
    its facts; SandboxError when it does not run."""
    env = {"PATH": os.environ.get("PATH", HOST_PATH), "LC_ALL": "C.UTF-8"}
    env.update({k: v for k, v in os.environ.items() if k in ("PYENV_ROOT", "PYENV_VERSION", "HOME")})
    try:
        done = subprocess.run(
            [str(python), "-c", _FACTS_CODE], capture_output=True, text=True, timeout=PROBE_TIMEOUT_S,
            env=env, cwd=cwd if cwd is not None and cwd.is_dir() else None, check=False,
        )
    except (OSError, subprocess.SubprocessError) as exc:
        raise SandboxError(f"the interpreter {python} does not run: {exc}") from exc
    if done.returncode != 0:
        raise SandboxError(f"the interpreter {python} does not run: {done.stderr.strip()[-300:]}")
    facts = json.loads(done.stdout.strip().splitlines()[-1])
    return Interpreter(
        executable=_keep_venv_path(Path(str(python)), Path(facts["executable"])), prefix=Path(facts["prefix"]),
        base_prefix=Path(facts["base_prefix"]), version=tuple(facts["version"]),
        path=tuple(Path(p) for p in facts["path"]), missing=tuple(facts["missing"]),
    )


def _keep_venv_path(asked: Path, reported: Path) -> Path:
    """The path to call: the venv's own `bin/python` as given (it finds pyvenv.cfg), else what it reported."""
    if asked.is_absolute() and (asked.parent.parent / "pyvenv.cfg").is_file():
        return asked
    return reported


def _venv_python(env_dir: Path) -> Path | None:
    python = env_dir / "bin" / "python"
    return python if python.exists() and (env_dir / "pyvenv.cfg").is_file() else None


def _pyproject(project: Path) -> dict:
    try:
        with open(project / "pyproject.toml", "rb") as handle:
            return tomllib.load(handle)
    except (OSError, tomllib.TOMLDecodeError):
        return {}


def _tool_output(argv: list[str], project: Path) -> str | None:
    """First line of a project tool's answer, or None when the tool is absent or fails."""
    if shutil.which(argv[0]) is None:
        return None
    try:
        done = subprocess.run(argv, cwd=project, capture_output=True, text=True, timeout=PROBE_TIMEOUT_S, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    lines = done.stdout.strip().splitlines()
    return lines[-1].strip() if done.returncode == 0 and lines else None


@functools.lru_cache(maxsize=32)
def _tool_environment(project: Path) -> tuple[str, str, Path] | None:
    """(kind, reason, python) of an environment Poetry, hatch or pdm keeps outside the project."""
    tools = _pyproject(project).get("tool", {})
    if "poetry" in tools or (project / "poetry.lock").is_file():
        found = _tool_output(["poetry", "env", "info", "-p"], project)
        if found and (python := _venv_python(Path(found))):
            return "poetry", f"`poetry env info -p` names {found}", python
    if "hatch" in tools or (project / "hatch.toml").is_file():
        found = _tool_output(["hatch", "env", "find", "default"], project)
        if found and (python := _venv_python(Path(found))):
            return "hatch", f"`hatch env find default` names {found}", python
    if "pdm" in tools or (project / "pdm.lock").is_file():
        found = _tool_output(["pdm", "info", "--python"], project)
        if found and Path(found).exists():
            return "pdm", f"`pdm info --python` names {found}", Path(found)
    return None


def _pep582_dirs(project: Path) -> tuple[Path, ...]:
    base = project / "__pypackages__"
    return tuple(sorted(p for p in base.glob("*/lib") if p.is_dir())) if base.is_dir() else ()


def _setting_python(setting: str) -> Path:
    found = setting if os.path.isabs(setting) else shutil.which(setting)
    if not found or not Path(found).exists():
        raise SandboxError(f"sandbox.python is {setting!r}, which does not exist; set it to an interpreter's path")
    return Path(found)


def _candidates(project: Path | None, setting: str | None) -> list[tuple[str, str, Path]]:
    if setting:
        reason = "sandbox.python is set (the editor's chosen interpreter or yours)"
        return [("setting", reason, _setting_python(setting))]
    found: list[tuple[str, str, Path]] = []
    if project is not None:
        uv_env = os.environ.get("UV_PROJECT_ENVIRONMENT")
        if uv_env:
            uv_dir = Path(uv_env) if os.path.isabs(uv_env) else project / uv_env
            if uv_python := _venv_python(uv_dir):
                found.append(("uv", f"UV_PROJECT_ENVIRONMENT names {uv_dir}", uv_python))
        for name in (".venv", "venv"):
            python = _venv_python(project / name)
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
            interpreter = ask_interpreter(python, cwd=project)
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
