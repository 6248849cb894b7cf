"""The process backend's interpreter, and agentls' *sandbox site* of test packages.

The bubblewrap backend runs the project's own environment (environment.py,
envview.py) and uses the sandbox site only when that environment has no
pytest. The process backend is not isolated and binds nothing: when agentls
runs as root its runs use an unprivileged uid, which cannot read /root,
where a pyenv interpreter usually lives. Its runtime is, in order:

1. `sandbox.python` from the settings, used as given;
2. our own interpreter (`sys.executable`) when an unprivileged uid can read
   it, its standard library and its site-packages;
3. the system interpreter (`/usr/bin/python3`) of the same major.minor, with
   the sandbox site on `PYTHONPATH`.

The sandbox site is a world-readable directory holding copies of the test
distributions (pytest, hypothesis, coverage and what they require), built
once per package set, atomically (a temp dir renamed into place), and reused
by every later run.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.metadata as metadata
import os
import shutil
import stat
import subprocess
import sys
import sysconfig
import tempfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import Requirement

from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.constants import SANDBOX_PYTHON, SANDBOX_UID, TEST_TOOLS

SITE_ROOT = Path("/var/tmp")


@dataclass(frozen=True)
class SandboxRuntime:
    """How to run Python inside a sandbox."""

    python: str  # interpreter path, valid inside the sandbox
    site_dir: Path | None = None
    ro_paths: tuple[Path, ...] = ()
    uid: int | None = None

    def pythonpath(self) -> str | None:
        return str(self.site_dir) if self.site_dir else None


def sandbox_uid() -> int | None:
    """The uid sandboxed commands run as: 65534 when we are root, else no switch."""
    return SANDBOX_UID if os.geteuid() == 0 else None


def readable_by_others(path: Path) -> bool:
    """True when a uid that is neither owner nor group can read `path` (traversing its parents)."""
    try:
        real = path.resolve(strict=True)
    except OSError:
        return False
    for parent in reversed(real.parents):
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
    mode = os.stat(real).st_mode
    needed = stat.S_IROTH | (stat.S_IXOTH if stat.S_ISDIR(mode) else 0)
    return mode & needed == needed


def _own_python_usable() -> bool:
    paths = [Path(sys.executable), Path(sysconfig.get_paths()["stdlib"]), Path(sysconfig.get_paths()["purelib"])]
    return all(readable_by_others(p) for p in paths)


@functools.lru_cache(maxsize=8)
def python_version_of(python: str) -> tuple[int, int] | None:
    """major.minor of another interpreter, or None when it does not run."""
    try:
        out = subprocess.run(
            [python, "-c", "import sys; print(*sys.version_info[:2])"],
            capture_output=True, text=True, timeout=20, check=True, env={"PATH": "/usr/bin:/bin"},
        ).stdout.split()
        return int(out[0]), int(out[1])
    except (OSError, subprocess.SubprocessError, ValueError, IndexError):
        return None


def _prefix_paths(python: Path, own: bool = False) -> tuple[Path, ...]:
    """Directories to bind so `python` and its stdlib work (outside /usr, which is always bound)."""
    candidates = {python.resolve().parent.parent}
    if own:
        candidates |= {Path(sys.prefix), Path(sys.base_prefix)}
    return tuple(sorted(p for p in candidates if len(p.parts) > 1 and p.parts[1] != "usr" and p.exists()))


def resolve_runtime(python_setting: str | None = None) -> SandboxRuntime:
    """Pick the interpreter and site dir for sandboxed runs (see the module docstring)."""
    uid = sandbox_uid()
    if python_setting:
        path = Path(python_setting)
        return SandboxRuntime(
            python=python_setting, ro_paths=_prefix_paths(path) if path.is_absolute() else (), uid=uid
        )
    if uid is None or _own_python_usable():
        return SandboxRuntime(python=sys.executable, ro_paths=_prefix_paths(Path(sys.executable), own=True), uid=uid)
    return _system_runtime(uid)


@functools.lru_cache(maxsize=1)
def _system_runtime(uid: int) -> SandboxRuntime:
    version = python_version_of(SANDBOX_PYTHON)
    if version != sys.version_info[:2]:
        raise SandboxError(
            f"no interpreter usable inside the sandbox: {sys.executable} is not readable by uid {uid} "
            f"and {SANDBOX_PYTHON} is {version or 'missing'} (need {sys.version_info[0]}.{sys.version_info[1]}); "
            "set sandbox.python to an interpreter outside /root"
        )
    return SandboxRuntime(python=SANDBOX_PYTHON, site_dir=ensure_sandbox_site(), uid=uid)


def _requirement_names(dist: metadata.Distribution) -> list[str]:
    names = []
    for spec in dist.requires or []:
        req = Requirement(spec)
        if req.marker is not None and not req.marker.evaluate({"extra": ""}):
            continue
        names.append(req.name)
    return names


def sandbox_distributions(roots: tuple[str, ...] = TEST_TOOLS) -> list[metadata.Distribution]:
    """`roots` and everything they require (no extras), installed in our environment."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(roots)
    while todo:
        name = todo.pop()
        key = name.lower().replace("_", "-")
        if key in seen:
            continue
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[key] = dist
        todo.extend(_requirement_names(dist))
    return sorted(seen.values(), key=lambda d: d.metadata["Name"].lower())


def _copy_distribution(dist: metadata.Distribution, dest: Path) -> None:
    base = Path(str(dist.locate_file(""))).resolve()
    for item in dist.files or []:
        if "__pycache__" in item.parts or item.parts[0] == "..":
            continue
        src = Path(str(dist.locate_file(item)))
        if not src.is_file():
            continue
        target = dest / src.resolve().relative_to(base)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, target)


def _precompile(site: Path) -> None:
    """Byte-compile the site with the sandbox interpreter: sandboxed runs never write bytecode."""
    subprocess.run(
        [SANDBOX_PYTHON, "-m", "compileall", "-q", "-j", "0", str(site)],
        capture_output=True,
        timeout=600,
        check=False,
        env={"PATH": "/usr/bin:/bin"},
    )


def _make_world_readable(root: Path) -> None:
    for dirpath, _dirnames, filenames in os.walk(root):
        os.chmod(dirpath, 0o755)
        for name in filenames:
            os.chmod(os.path.join(dirpath, name), 0o644 if not name.endswith(".so") else 0o755)


def ensure_sandbox_site(root: Path = SITE_ROOT, roots: tuple[str, ...] = TEST_TOOLS) -> Path:
    """The cached, world-readable site dir with the test distributions `roots`; built on first use."""
    dists = sandbox_distributions(tuple(roots))
    key = ";".join(f"{d.metadata['Name']}=={d.version}" for d in dists) + f";py{sys.version_info[:2]};pyc"
    final = root / f"agentls-site-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    if (final / ".complete").is_file():
        return final
    building = Path(tempfile.mkdtemp(prefix="agentls-site-build-", dir=root))
    try:
        for dist in dists:
            _copy_distribution(dist, building)
        _precompile(building)
        (building / ".complete").write_text(key + "\n", encoding="utf-8")
        _make_world_readable(building)
        try:
            os.rename(building, final)
        except OSError:
            if not (final / ".complete").is_file():
                raise
    finally:
        shutil.rmtree(building, ignore_errors=True)
    return final
