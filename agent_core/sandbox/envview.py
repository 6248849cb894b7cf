"""How a project's environment appears inside the bubblewrap sandbox.

From the chosen `ProjectEnvironment` (environment.py) and the workspace's
origin, `plan_view` works out what to bind read-only (the interpreter's
prefixes and every `sys.path` directory outside /usr and the project), a
PATH that starts with the environment's `bin/` and then a `bin/` of our own
supplying what it lacks (`python`, `python3`, and a `pytest` that runs
`python3 -m pytest` when the environment has no pytest), and
what goes on PYTHONPATH (the caller's own directories first, then a src/
layout's `src` (project_image.src_pythonpath, the Docker backend's rule), then PEP 582
`__pypackages__`, then a dir whose `sitecustomize` appends agentls' sandbox
site of test distributions (pytest, hypothesis, coverage) *after* the
environment's site-packages: what the environment lacks comes from there,
what it has is never shadowed).

The shadow copy of a project lives at another path than the project, while
an editable install (a `.pth` file or an `__editable__` finder) points into
the original: the sandbox shows the copy at the original path as well, so
those imports load the copy's code. Directories of the environment inside
the project (its `.venv/`, which the copy leaves out) are bound over that.
"""

from __future__ import annotations

import os
import sys
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.sandbox.constants import TEST_TOOLS
from agent_core.sandbox.environment import ProjectEnvironment
from agent_core.sandbox.identity import write_if_changed
from agent_core.sandbox.project_image import src_pythonpath
from agent_core.sandbox.runtime import SITE_ROOT, ensure_sandbox_site

PURE_PYTEST_FROM = (3, 10)  # the oldest Python the pytest agentls carries supports (its Requires-Python)

BIN_DIR = "/opt/agentls/bin"
SYSTEM_DIRS = (Path("/usr"), Path("/bin"), Path("/lib"), Path("/lib64"), Path("/sbin"))
NEVER_WHOLE = (Path("/"), Path("/root"), Path("/home"), Path("/tmp"), Path("/etc"), Path.home())  # too wide to bind
PYTEST_SCRIPT = '#!/bin/sh\nexec python3 -m pytest "$@"\n'
SITECUSTOMIZE = (
    '"""agentls: its test distributions, after the environment\'s own site-packages (never before)."""\n'
    "import site\n\nsite.addsitedir({site!r})\n"
)


@dataclass(frozen=True)
class EnvView:
    """Binds, links and variables that make the environment work inside the sandbox."""

    ro_outside: tuple[Path, ...]  # bound read-only at their own path
    ro_inside_origin: tuple[Path, ...]  # bound read-only over the copy shown at the origin path
    links: tuple[tuple[str, str], ...]  # (target, link) created in BIN_DIR
    path: str
    pythonpath: tuple[str, ...] = field(default=())


def _under(path: Path, roots: tuple[Path, ...]) -> bool:
    return any(path == root or root in path.parents for root in roots)


def _missing_or_empty(path: Path) -> bool:
    if not path.exists():
        return True
    return path.is_dir() and not any(path.iterdir())


def minimal_cover(paths: list[Path]) -> tuple[Path, ...]:
    """The given directories without those inside another one of them."""
    kept: list[Path] = []
    for path in sorted(set(paths), key=lambda p: len(p.parts)):
        if not _under(path, tuple(kept)):
            kept.append(path)
    return tuple(sorted(kept))


def environment_dirs(env: ProjectEnvironment) -> list[Path]:
    """Existing directories the interpreter needs: its prefixes, its real home, its sys.path."""
    interp = env.interpreter
    wanted = [interp.prefix, interp.base_prefix, Path(os.path.realpath(interp.executable)).parent.parent,
              env.bin_dir, *interp.path]
    found = []
    for path in wanted:
        real = Path(os.path.realpath(path))
        for candidate in {path, real}:
            if candidate.is_dir() and candidate not in NEVER_WHOLE and not _under(candidate, SYSTEM_DIRS):
                found.append(candidate)
    return found


def pytest_script_dir(site: Path, root: Path = SITE_ROOT) -> Path:
    """A world-readable dir with a `pytest` script (`python3 -m pytest`) and the fallback `sitecustomize`.

    The dir goes on PYTHONPATH; its `sitecustomize`, imported once the
    interpreter's own site-packages are on sys.path, appends `site` after
    them: a test distribution the environment lacks comes from agentls' copy,
    one it has is never shadowed. Interpreters started inside the sandbox
    (a venv that `uv run` or tox makes there) inherit it through PYTHONPATH.
    (It takes the place of a `sitecustomize` the interpreter may have, such
    as Debian's, which only installs a crash reporter hook.)
    """
    target = root / f"{site.name}-bin"  # one per site: its sitecustomize names that site
    target.mkdir(mode=0o755, exist_ok=True)
    write_if_changed(target / "pytest", PYTEST_SCRIPT, 0o755)
    write_if_changed(target / "sitecustomize.py", SITECUSTOMIZE.format(site=str(site)), 0o644)
    return target


def added_roots(env: ProjectEnvironment) -> tuple[str, ...]:
    """The test distributions of agentls' sandbox site that go after the environment's own (none: no site).

    The same Python: all of them. Another Python (a pyenv `.python-version`, an older or newer venv) without
    pytest: pytest and what it needs are pure Python, so they run there, and so does coverage (the fault
    localization's spectrum), whose compiled tracer another Python ignores for its pure-Python one (where
    coverage.py does not run, 3.10 for the coverage.py that needs 3.11, the search driver records lines with
    its own tracer). Not hypothesis: it needs its compiled part. Another Python with its own pytest: nothing.
    """
    if env.interpreter.version == tuple(sys.version_info[:2]):
        return TEST_TOOLS
    if not env.interpreter.has_pytest and env.interpreter.version >= PURE_PYTEST_FROM:
        return ("pytest", "coverage")
    return ()


def plan_view(
    env: ProjectEnvironment, workspace: Path, origin: Path | None, caller_pythonpath: str | None,
) -> EnvView:
    """What `BubblewrapSandbox.command` adds for `env` (see the module docstring)."""
    project_roots = tuple(p for p in (workspace, origin) if p is not None)
    dirs = environment_dirs(env)
    caller_entries = [p for p in (caller_pythonpath or "").split(":") if p]
    dirs += [Path(p) for p in caller_entries if os.path.isabs(p) and Path(p).is_dir()]
    site: Path | None = None
    links = [(str(env.python), f"{BIN_DIR}/{name}") for name in ("python", "python3")
             if not (env.bin_dir / name).exists()]
    roots = added_roots(env)
    if roots:
        site = ensure_sandbox_site(roots=roots)
    if site is not None:
        script_dir = pytest_script_dir(site)
        dirs += [site, script_dir]
        if not env.interpreter.has_pytest and not (env.bin_dir / "pytest").exists():
            links.append((str(script_dir / "pytest"), f"{BIN_DIR}/pytest"))
    # Environment dirs inside the project are bound over the copy only where the copy lacks them
    # (its .venv/; an empty dir there is the mount point an earlier run left): a src/ dir on
    # sys.path must stay the copy's own.
    inside = [p for p in dirs if origin is not None and _under(p, (origin,)) and not _under(p, (workspace,))
              and _missing_or_empty(workspace / p.relative_to(origin))]
    outside = [p for p in dirs if not _under(p, project_roots)]
    # A src/ layout's own tree goes on PYTHONPATH, as in the Docker backend: the tests import the copy's
    # code even when the project is not installed, or installed as a (stale) non-editable copy.
    src = src_pythonpath(workspace)
    pythonpath = [*caller_entries, *([src] if src else []), *(str(p) for p in env.extra_pythonpath)]
    if site is not None:  # its sitecustomize appends the site after the environment's own site-packages
        pythonpath.append(str(script_dir))
    return EnvView(
        ro_outside=minimal_cover(outside), ro_inside_origin=minimal_cover(inside), links=tuple(links),
        path=f"{env.bin_dir}:{BIN_DIR}:/usr/local/bin:/usr/bin:/bin", pythonpath=tuple(pythonpath),
    )
