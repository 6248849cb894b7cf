"""Start a limited child process and make sure nothing it started survives.

Shared by the bubblewrap and plain-process backends: the uid switch (by
Popen) and rlimits (by `prlimit`) before the payload starts, with no Python
code between fork and exec; output capped to its tail, a
wall-clock timeout, a bound on what the run adds to its workspace on disk
(diskwatch.py), and a kill of everything the run started (its process
group, plus every process carrying the run's marker variable) on timeout,
on cancellation and after a normal exit.
"""

from __future__ import annotations

import asyncio
import atexit
import contextlib
import dataclasses
import functools
import math
import os
import resource
import shutil
import signal
import time
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from agent_core.sandbox import proctree
from agent_core.sandbox.base import CommandResult, SandboxError, sandbox_env
from agent_core.sandbox.constants import OUTPUT_CAP
from agent_core.sandbox.diskwatch import GROWTH_FACTOR, WorkspaceWatch
from agent_core.sandbox.uids import nproc_for

if TYPE_CHECKING:
    from agent_core.settings import SandboxSettings

RUN_MARKER = "SANDBOX_RUN_ID"
# Soft stack limit of a run. glibc sizes every thread's stack from it, and each stack counts
# against the address-space limit: at the usual 8 MiB, 300 threads need 2.4 GiB of address
# space and a thread-pool suite fails with "can't start new thread" under `memory_mb`. The hard
# limit is left alone, so a test that needs a deep main stack can raise its own soft limit.
STACK_SOFT_MB = 2


@dataclass(frozen=True)
class Limits:
    """Resource limits of one run."""

    timeout_s: float
    memory_mb: int
    pids: int
    file_size_mb: int
    cpus: float = 1.0
    nproc: int | None = None  # RLIMIT_NPROC when it differs from `pids` (see uids.nproc_for)

    @property
    def workspace_growth_bytes(self) -> int:
        """What a run may add to its workspace on disk (diskwatch.py): GROWTH_FACTOR times the largest file."""
        return GROWTH_FACTOR * self.file_size_mb * 1024 * 1024

    @property
    def cpu_s(self) -> int:
        """CPU seconds: above the wall-clock budget, so a busy loop is reported as a timeout first."""
        return math.ceil(self.timeout_s * max(self.cpus, 1.0)) + 5

    @classmethod
    def from_settings(cls, settings, timeout_s: float | None) -> Limits:  # noqa: ANN001 - SandboxSettings
        return cls(
            timeout_s=timeout_s or settings.timeout_s,
            memory_mb=settings.memory_mb,
            pids=settings.pids,
            file_size_mb=settings.file_size_mb,
            cpus=settings.cpus,
        )


def limited_command(argv: list[str], limits: Limits) -> list[str]:
    """argv behind util-linux's `prlimit`, which lowers the rlimits and then execs it.

    A separate program rather than a `preexec_fn`: Python code run between fork
    and exec can deadlock when other threads exist (the language server runs each
    pipeline on a thread of its own). A limit above the inherited hard one is
    clamped to it, as an unprivileged process could not raise it.
    """
    prlimit = shutil.which("prlimit") or shutil.which("prlimit", path="/usr/bin:/bin")  # an editor's short PATH
    if prlimit is None:
        raise SandboxError("the sandbox needs `prlimit` to limit its runs; install util-linux")
    mib = 1024 * 1024
    wanted = [
        ("cpu", resource.RLIMIT_CPU, limits.cpu_s),
        ("fsize", resource.RLIMIT_FSIZE, limits.file_size_mb * mib),
        ("nproc", resource.RLIMIT_NPROC, limits.nproc or limits.pids),
        ("core", resource.RLIMIT_CORE, 0),
        ("as", resource.RLIMIT_AS, limits.memory_mb * mib),
    ]
    options = []
    for name, which, value in wanted:
        _, hard = resource.getrlimit(which)
        value = value if hard == resource.RLIM_INFINITY else min(value, hard)
        options.append(f"--{name}={value}:{value}")
    _, hard_stack = resource.getrlimit(resource.RLIMIT_STACK)
    stack = STACK_SOFT_MB * mib if hard_stack == resource.RLIM_INFINITY else min(STACK_SOFT_MB * mib, hard_stack)
    options.append(f"--stack={stack}:")  # the soft limit only
    return [prlimit, *options, "--", *argv]


def as_user(uid: int | None) -> dict[str, object]:
    """Popen keywords that switch the child to `uid` (group `uid`, no supplementary groups) before exec."""
    return {} if uid is None else {"user": uid, "group": uid, "extra_groups": []}


YIELD_NICE = 19


def yield_cpu(pid: int) -> bool:
    """Give the CPU to others first: set the scheduler autogroup of `pid`'s session to nice YIELD_NICE.

    With autogroups (Linux's default), each session competes as one group whatever its processes' nice
    values, so a test run started in a session of its own takes an equal share from the local model's
    server however it is niced; the group's own nice is what the scheduler weighs. Raising it needs no
    privilege. False where the kernel has no autogroups (or the process is gone). bench/model_speed.py measures
    what it buys the model (docs/local-model.md); a sandboxed run's payload does the same to itself before it
    starts (`yielding_prefix`), so no test runs before its weight is set. Where the process sits in a cpu
    cgroup of its own (containers, CI machines), the kernel schedules no autogroup and the process nice
    counts: `niced`."""
    try:
        Path(f"/proc/{pid}/autogroup").write_text(f"{YIELD_NICE}\n")
    except OSError:
        return False
    return True


def niced(argv: list[str]) -> list[str]:
    """argv behind coreutils' `nice -n YIELD_NICE`: every process of the run inherits the lowest priority.

    It counts where processes are weighed one by one: under cgroup scheduling, where /proc/PID/autogroup
    reads empty and `yield_cpu` changes nothing. Inside an autogroup it is harmless."""
    nice = shutil.which("nice", path="/usr/bin:/bin")
    return [nice, "-n", str(YIELD_NICE), *argv] if nice else argv


# A run's session is a scheduler autogroup of its own (`start_new_session`, bwrap's `--new-session`): written
# from the host after the start, its weight would come only once the payload already runs (and bwrap's payload is
# out of the host's reach), so the payload sets it first, then execs. The kernel takes such a write from an
# unprivileged process once per 100 ms from the whole machine (EAGAIN otherwise): a few tries, 50 ms apart.
_YIELD_SCRIPT = (f"for try in 1 2 3 4; do echo {YIELD_NICE} 2>/dev/null >/proc/self/autogroup && break; "
                 'sleep 0.05; done; exec "$@"')


def yielding_prefix() -> list[str]:
    """argv prefix that sets the payload's autogroup to nice YIELD_NICE (the local model's server comes first)."""
    shell = shutil.which("sh", path="/usr/bin:/bin")
    return [shell, "-c", _YIELD_SCRIPT, "agentls-yield"] if shell else []


def new_marker() -> str:
    """A marker for one sandboxed process tree (not a run id): unique, so a sweep kills only its own."""
    return uuid.uuid4().hex


def kill_everything(pgid: int, run_id: str | None, root_started: str | None = None) -> None:
    """SIGKILL the run's process group, (given its start time) the root's descendants, and (given a run id)
    every process marked with it.

    bwrap's child leaves the group (`--new-session`) before it binds its lifetime to bwrap's: a kill of
    the group alone can miss it in that moment, and it then runs on. The group is stopped first so that
    no process of it can start, or finish setting up, a child between the scan and the kill. `root_started`
    (the root's start time when it was launched) tells that the pid is still the run's own.
    """
    if root_started and proctree.start_time(pgid) == root_started:
        _signal_group(pgid, signal.SIGSTOP)
        proctree.kill(proctree.descendants(pgid))
    _signal_group(pgid, signal.SIGKILL)
    for _ in range(3 if run_id else 0):
        pids = proctree.marked(RUN_MARKER, run_id or "")  # never "": the loop runs only given a run id
        if not pids:
            return
        proctree.kill(pids)
        time.sleep(0.02)


def _signal_group(pgid: int, sig: int) -> None:
    try:
        os.killpg(pgid, sig)
    except (ProcessLookupError, PermissionError):
        pass


async def _read_tail(stream: asyncio.StreamReader | None, cap: int = OUTPUT_CAP) -> bytes:
    buf = bytearray()
    if stream is None:
        return b""
    while chunk := await stream.read(65536):
        buf += chunk
        if len(buf) > 2 * cap:
            del buf[: len(buf) - cap]
    return bytes(buf[-cap:])


def limit_from(exit_code: int | None, output: str) -> str | None:
    """Which limit ended the run, guessed from the signal or the error text."""
    if exit_code is not None:
        sig = -exit_code if exit_code < 0 else exit_code - 128 if exit_code > 128 else 0
        if sig == signal.SIGXCPU:
            return "cpu"
        if sig == signal.SIGXFSZ:
            return "file_size"
    if "File too large" in output:
        return "file_size"
    if "No space left on device" in output:
        return "disk"  # a sized /tmp or /dev/shm (constants.tmpfs_sizes) is full
    if "MemoryError" in output or "Cannot allocate memory" in output:
        return "memory"
    if "fork: Resource temporarily unavailable" in output or "BlockingIOError: [Errno 11]" in output:
        return "pids"
    return None


class _ExitProtocol(asyncio.subprocess.SubprocessStreamProtocol):
    """Stream protocol that also reports the moment the child exits.

    `Process.wait()` only returns once every pipe is closed, so a payload that
    leaves a child holding stdout would make it wait for the full timeout.
    """

    def __init__(self, exited: asyncio.Future, loop: asyncio.AbstractEventLoop) -> None:
        super().__init__(limit=2**16, loop=loop)
        self._exited = exited

    def process_exited(self) -> None:
        super().process_exited()
        if not self._exited.done():
            self._exited.set_result(None)


async def _start(argv: list[str], **kwds: Any) -> tuple[asyncio.subprocess.Process, asyncio.Future, str]:
    """The started process, a future set when it exits, and its start time (see kill_everything)."""
    loop = asyncio.get_running_loop()
    exited: asyncio.Future = loop.create_future()
    transport, protocol = await loop.subprocess_exec(
        lambda: _ExitProtocol(exited, loop), *argv, start_new_session=True,
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.PIPE, **kwds,
    )
    return asyncio.subprocess.Process(transport, protocol, loop), exited, proctree.start_time(transport.get_pid())


async def _start_whole(
    argv: list[str], marker: str | None, **kwds: Any,
) -> tuple[asyncio.subprocess.Process, asyncio.Future, str]:
    """`_start`, which a cancel cannot cut short: it waits for the start to finish, kills it all and re-raises.

    asyncio's own clean-up of a start cancelled half-way (after the fork, while the pipes connect) kills
    only the direct child, and then waits for pipes that may never connect. bwrap has cloned its child by
    then: with its parent dead before the go-ahead, that child blocks for ever, as pid 1 of its own pid
    namespace, which ignores SIGTERM, re-parented to init.
    """
    starting = asyncio.ensure_future(_start(argv, **kwds))
    try:
        return await asyncio.shield(starting)
    except asyncio.CancelledError:
        while not starting.done():
            with contextlib.suppress(asyncio.CancelledError):
                await asyncio.wait([starting])
        if not starting.cancelled() and starting.exception() is None:
            proc, _, root_started = starting.result()
            kill_everything(proc.pid, marker, root_started)
            await _reap(proc)
        raise


@functools.cache
def _kill_own_runs_at_exit() -> None:
    """Once per process, at its first launch: at a normal exit (not SIGKILL, not os._exit), kill what is left."""
    atexit.register(proctree.kill_own_runs)


async def launch(
    argv: list[str],
    *,
    cwd: Path,
    env: dict[str, str],
    timeout_s: float,
    uid: int | None,
    limits: Limits,
    run_id: str,
    sweep: bool = True,
    pass_fds: tuple[int, ...] = (),
    watch_workspace: bool = True,
    yielding: bool = True,
) -> CommandResult:
    """Run argv to completion (or the timeout); cancellation kills everything and re-raises.

    With `watch_workspace`, the workspace (`cwd`) may grow by `limits.workspace_growth_bytes` on disk; a run that adds
    more is killed as `limit_hit="workspace_size"` (diskwatch.py).

    With `sweep`, processes that left the process group are found by the run's
    marker variable and killed too (bubblewrap does not need it: killing bwrap's
    processes tears down its pid namespace). Every process started carries its
    owner's identity (proctree.OWNER_VAR), for `proctree.kill_orphaned_runs`. `pass_fds` stay open in
    the child (the test report's channel, testing/channel.py); every other descriptor is closed. With
    `yielding`, the run's session yields the CPU (its payload sets its autogroup: `yielding_prefix`); every run
    is niced (`niced`) whatever it says.
    """
    _kill_own_runs_at_exit()
    env = {**env, RUN_MARKER: run_id, proctree.OWNER_VAR: proctree.owner_value()}
    marker = run_id if sweep else None
    # measured off the event loop: a walk of a big tree takes a while (36,000 files: 0.17 s)
    watch = await asyncio.to_thread(WorkspaceWatch, cwd, limits.workspace_growth_bytes) if watch_workspace else None
    started = time.monotonic()
    command = limited_command([*yielding_prefix(), *argv] if yielding else argv, limits)
    proc, exited, root = await _start_whole(niced(command), marker, cwd=str(cwd), env=env,
                                            pass_fds=pass_fds, **as_user(uid))
    readers = [asyncio.create_task(_read_tail(proc.stdout)), asyncio.create_task(_read_tail(proc.stderr))]
    if watch is not None:
        watch.pids = lambda: [proc.pid, *proctree.descendants(proc.pid)]
    try:
        stopped = await _wait_exit(exited, timeout_s, watch)
    except asyncio.CancelledError:
        kill_everything(proc.pid, marker, root)
        for task in readers:
            task.cancel()
        await asyncio.shield(_reap(proc))
        raise
    kill_everything(proc.pid, marker, root)
    await _reap(proc)
    done, pending = await asyncio.wait(readers, timeout=2.0)
    for task in pending:
        task.cancel()
    out, err = (t.result().decode("utf-8", "replace") if t in done else "" for t in readers)
    timed_out = stopped == "timeout"
    exit_code = None if stopped else proc.returncode
    if stopped == "workspace_size" and watch is not None:
        err += "\n" + watch.describe()
    limit = stopped if stopped == "workspace_size" else None
    return CommandResult(
        exit_code=exit_code, stdout=out, stderr=err, duration_s=time.monotonic() - started, timed_out=timed_out,
        limit_hit=limit or (None if timed_out or exit_code == 0 else limit_from(exit_code, out + err)),
    )


async def _wait_exit(exited: asyncio.Future, timeout_s: float, watch: WorkspaceWatch | None) -> str | None:
    """Wait for the run to exit: None when it did, "timeout" at the wall-clock limit, "workspace_size" when
    `watch` finds the workspace grown past its bound (diskwatch.py)."""
    deadline = time.monotonic() + timeout_s
    while True:
        left = deadline - time.monotonic()
        if left <= 0:
            return "timeout"
        try:
            await asyncio.wait_for(asyncio.shield(exited), min(left, watch.interval) if watch else left)
            return None
        except TimeoutError:
            if watch is not None and await watch.exceeded():
                return "workspace_size"


def prepare_workspace(workspace: Path, uid: int | None) -> None:
    """Make `workspace` (a private temp copy) writable by the sandbox uid and reachable through its parents."""
    if uid is None:
        return
    resolved = workspace.resolve()
    if not any(p.name.startswith("agentls-") for p in (resolved, *resolved.parents)):
        raise SandboxError(
            f"refusing to hand {workspace} to the sandbox uid {uid}: sandboxed runs need a private copy "
            "(a ShadowWorkspace or a dir from cleanup.make_temp_dir), never the user's own files"
        )
    for dirpath, dirnames, filenames in os.walk(workspace):
        os.lchown(dirpath, uid, uid)
        for name in dirnames + filenames:
            os.lchown(os.path.join(dirpath, name), uid, uid)
    for parent in workspace.resolve().parents:
        mode = parent.stat().st_mode
        if mode & 0o001:
            continue
        if parent.name.startswith("agentls-"):
            os.chmod(parent, mode | 0o011)
        else:
            raise SandboxError(f"the sandbox user cannot reach {workspace}: {parent} is not searchable by others")


async def _reap(proc: asyncio.subprocess.Process) -> None:
    try:
        await asyncio.wait_for(proc.wait(), 5.0)
    except TimeoutError:
        pass


def prepare_local_run(
    workspace: Path, settings: SandboxSettings, uid: int | None, pythonpath: str | None, timeout_s: float | None,
    env: dict[str, str] | None,
) -> tuple[Path, Limits, dict[str, str]]:
    """What both local backends do before launching: check the workspace, hand it to the run's uid,
    and build the limits (the process limit counted for that uid) and the scrubbed environment.

    `pythonpath` goes after any PYTHONPATH the caller passes in `env`.
    """
    workspace = workspace.resolve()
    if not workspace.is_dir():
        raise SandboxError(f"workspace {workspace} is not a directory")
    prepare_workspace(workspace, uid)
    limits = Limits.from_settings(settings, timeout_s)
    limits = dataclasses.replace(limits, nproc=nproc_for(uid, limits.pids))
    inner_env = sandbox_env(env)
    if pythonpath:
        inner_env["PYTHONPATH"] = ":".join(p for p in (inner_env.get("PYTHONPATH"), pythonpath) if p)
    return workspace, limits, inner_env
