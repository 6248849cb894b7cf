"""The processes of sandboxed runs as /proc shows them: a run's process tree, and runs whose owner died.

Every process the launcher starts carries OWNER_VAR ("<pid> <start time>" of the agentls process that
started it, its owner) in its environment. bubblewrap's own two processes keep it (the payload inside
gets a clean environment, but it lives in bwrap's pid namespace, which dies with them); a plain-process
run's payload and its children inherit it. bwrap ties its processes' lifetime to the owner's
(`--die-with-parent`) only once each of them has reached a certain point of its set-up: an owner killed
in those first milliseconds leaves a sandbox behind, running or blocked for ever. `kill_orphaned_runs`
finds such processes by the variable and kills them when the owner it names is gone (the pid is dead or
now belongs to a process started at another time); the server and every CLI command call it at start.

The processes, their parents and environments come from psutil; start times from /proc (start_time).
"""

from __future__ import annotations

import os
import signal
from collections.abc import Callable
from pathlib import Path

import psutil

OWNER_VAR = "AGENTLS_SANDBOX_OWNER"
_GONE = (psutil.NoSuchProcess, psutil.AccessDenied)  # ZombieProcess is a NoSuchProcess


def start_time(pid: int) -> str:
    """The process's start time in clock ticks since boot (tells a pid's reuse apart); '' when it is gone.

    Read from /proc/PID/stat by hand, not psutil's float `create_time()`: the value is shared with every
    other agentls on the machine (OWNER_VAR, temp dir markers), and each must read a live owner's the same.
    """
    try:
        text = (Path("/proc") / str(pid) / "stat").read_text()
    except OSError:
        return ""
    return text.rsplit(")", 1)[1].split()[19]


def owner_value() -> str:
    """OWNER_VAR's value for processes this process starts."""
    return f"{os.getpid()} {start_time(os.getpid())}"


def owner_alive(value: str) -> bool:
    """Whether the owner an OWNER_VAR value names is still running (a malformed value: treated as alive)."""
    pid_text, _, started = value.partition(" ")
    if not pid_text.isdigit() or not started:
        return True
    return start_time(int(pid_text)) == started


def descendants(*pids: int) -> list[int]:
    """Every live descendant of the given processes, parents before their children."""
    children: dict[int, list[int]] = {}
    for proc in psutil.process_iter(["ppid"]):
        children.setdefault(proc.info["ppid"], []).append(proc.pid)
    found, frontier = [], list(pids)
    while frontier:
        below = children.get(frontier.pop(), [])
        found.extend(below)
        frontier.extend(below)
    return found


def environment_value(pid: int, name: str) -> str | None:
    """The value of `name` in the environment the process was started with; None if absent or unreadable."""
    try:
        return psutil.Process(pid).environ().get(name)
    except (*_GONE, OSError):
        return None


def _with_value(name: str, which: Callable[[str], bool]) -> list[int]:
    """Processes (this one aside: it may itself be a sandboxed run's) whose `name` has a value `which` accepts."""
    found = []
    for proc in psutil.process_iter():
        if proc.pid == os.getpid():
            continue
        value = environment_value(proc.pid, name)
        if value is not None and which(value):
            found.append(proc.pid)
    return found


def marked(name: str, value: str) -> list[int]:
    """Processes whose environment has `name` set to `value`."""
    return _with_value(name, lambda found: found == value)


def owned_by(owner_pid: int) -> list[int]:
    """Processes of the sandboxed runs that `owner_pid` started (whether it is still running or not)."""
    return _with_value(OWNER_VAR, lambda value: value.split(" ")[0] == str(owner_pid))


def kill(pids: list[int], sig: int = signal.SIGKILL) -> None:
    """Send `sig` to each pid, skipping those already gone."""
    for pid in pids:
        try:
            os.kill(pid, sig)
        except (ProcessLookupError, PermissionError):
            pass


def _kill_runs(which: Callable[[str], bool], rounds: int = 3) -> list[int]:
    """SIGKILL the processes carrying OWNER_VAR with a value `which` accepts, with their descendants; returns
    their pids.

    Each round stops what it found before it looks for their children, so that none of them (a bwrap
    still starting, say) can start a child between the scan and the kill.
    """
    killed: set[int] = set()
    for _ in range(rounds):
        found = _with_value(OWNER_VAR, which)
        if not found:
            break
        kill(found, signal.SIGSTOP)
        family = [*found, *descendants(*found)]
        kill(family)
        killed.update(family)
    return sorted(killed)


def kill_orphaned_runs() -> list[int]:
    """SIGKILL every process of a sandboxed run whose owner is gone, with its descendants; returns their pids."""
    return _kill_runs(lambda value: not owner_alive(value))


def kill_own_runs() -> list[int]:
    """SIGKILL every process of this process's sandboxed runs (at exit: what a run still starting, or a
    clean-up cut short, would leave), with their descendants; returns their pids."""
    mine = owner_value()
    return _kill_runs(lambda value: value == mine)
