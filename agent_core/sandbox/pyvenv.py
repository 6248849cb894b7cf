"""An interpreter's facts, and a virtual environment's facts read from its files without running anything.

A project's `.venv/` (or any environment a project names) is the project's
own content: its `bin/python` may be any executable, so agentls never runs
it on the host. Its facts come from `pyvenv.cfg` instead (`home`, `version`
or `version_info`, `include-system-site-packages`, written by venv,
virtualenv and uv alike): the base installation is `home`'s parent, which
must hold the standard library of that version (`lib/pythonX.Y/os.py`), and
`sys.path` is what `site` would make of it: the standard library, the
environment's site-packages and the directories its `.pth` files name
(`import` lines are code, and are not run). Whether pytest, hypothesis and
coverage are there is read from the same directories. The interpreter then
runs only inside the sandbox.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from agent_core.sandbox.base import SandboxError

TEST_MODULES = ("pytest", "hypothesis", "coverage")
_VERSION = re.compile(r"^\s*(\d+)\.(\d+)")
PTH_CAP = 256 * 1024  # a .pth file larger than this is not read


@dataclass(frozen=True)
class Interpreter:
    """What an interpreter is: its executable, prefixes, version, `sys.path` and the test modules it lacks."""

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


def read_cfg(env_dir: Path) -> dict[str, str]:
    """`pyvenv.cfg`'s `key = value` lines (keys lower-cased); empty when there is none."""
    try:
        text = (env_dir / "pyvenv.cfg").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    values = {}
    for line in text.splitlines()[:200]:
        key, sep, value = line.partition("=")
        if sep:
            values[key.strip().lower()] = value.strip()
    return values


def _pth_dirs(site: Path) -> list[Path]:
    """The directories a site-packages' `.pth` files add (path lines only; `import` lines are never run)."""
    found: list[Path] = []
    try:
        files = sorted(site.glob("*.pth"))
    except OSError:
        return found
    for pth in files:
        try:
            if pth.stat().st_size > PTH_CAP:
                continue
            lines = pth.read_text(encoding="utf-8", errors="replace").splitlines()
        except OSError:
            continue
        for line in lines:
            entry = line.strip()
            if not entry or entry.startswith(("#", "import ", "import\t")):
                continue
            candidate = site / entry
            if candidate.is_dir():
                found.append(candidate)
    return found


def _has_module(name: str, dirs: list[Path]) -> bool:
    return any((d / name / "__init__.py").is_file() or (d / f"{name}.py").is_file() for d in dirs)


def venv_interpreter(env_dir: Path) -> Interpreter:
    """The facts of the virtual environment `env_dir`, from its `pyvenv.cfg` and files (nothing runs);
    SandboxError when they do not describe a Python installation."""
    cfg = read_cfg(env_dir)
    where = env_dir / "pyvenv.cfg"
    version_text = cfg.get("version_info") or cfg.get("version") or ""
    match = _VERSION.match(version_text)
    if not cfg.get("home") or match is None:
        raise SandboxError(f"{where} names no `home` and `version`: not a virtual environment agentls can use")
    version = (int(match.group(1)), int(match.group(2)))
    home = Path(cfg["home"])
    base = home.parent if home.name == "bin" else home
    lib = f"python{version[0]}.{version[1]}"
    stdlib = base / "lib" / lib
    if not home.is_absolute() or not (stdlib / "os.py").is_file():
        raise SandboxError(f"{where}: home = {cfg['home']} is not a Python {version[0]}.{version[1]} installation "
                           f"(no {stdlib}/os.py)")
    site = env_dir / "lib" / lib / "site-packages"
    path = [base / "lib" / f"python{version[0]}{version[1]}.zip", stdlib, stdlib / "lib-dynload", site]
    path += _pth_dirs(site)
    if cfg.get("include-system-site-packages", "false").lower() == "true":  # Debian's are dist-packages
        path += [stdlib / "site-packages", base / "local" / "lib" / lib / "dist-packages",
                 base / "lib" / f"python{version[0]}" / "dist-packages"]
    path = [p for p in path if p.exists()]
    missing = tuple(name for name in TEST_MODULES if not _has_module(name, path))
    return Interpreter(executable=env_dir / "bin" / "python", prefix=env_dir, base_prefix=base, version=version,
                       path=tuple(path), missing=missing)


def venv_python(env_dir: Path) -> Path | None:
    """`env_dir/bin/python` when `env_dir` is a virtual environment (has `pyvenv.cfg`), else None."""
    python = env_dir / "bin" / "python"
    return python if (python.exists() or python.is_symlink()) and (env_dir / "pyvenv.cfg").is_file() else None


def env_dir_of(python: Path) -> Path | None:
    """The virtual environment `python` (a `.../bin/python*` path, not resolved) belongs to, if any."""
    env_dir = python.parent.parent
    return env_dir if python.parent.name == "bin" and (env_dir / "pyvenv.cfg").is_file() else None
