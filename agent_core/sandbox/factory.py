"""Pick and build the sandbox backend named by the settings.

"auto" prefers Docker (when its backend module is installed and an engine
answers), then bubblewrap (when a probe run works), then a plain process,
announced once as not isolated. An explicitly named backend that cannot run
is an error that says why.
"""

from __future__ import annotations

import importlib
import threading
from collections.abc import Callable

from agent_core.events import MessageEvent, RunHooks
from agent_core.sandbox.base import Sandbox, SandboxError
from agent_core.sandbox.bubblewrap import BubblewrapSandbox, probe_bwrap
from agent_core.sandbox.cleanup import remove_leftovers
from agent_core.sandbox.process import NOT_ISOLATED_WARNING, ProcessSandbox
from agent_core.sandbox.proctree import kill_orphaned_runs
from agent_core.settings import SandboxSettings, Settings

Announce = Callable[[str], None]
_warned: set[str] = set()


def _sandbox_settings(settings: Settings | SandboxSettings) -> SandboxSettings:
    return settings.sandbox if isinstance(settings, Settings) else settings


# The docker SDK's modules import each other in cycles: imported for the first time by two threads at once (the
# language server's start-up clean-up and a run), Python's per-module import locks can report a deadlock. One
# lock makes the first import of the backend one thread's.
_IMPORT_LOCK = threading.Lock()


def _docker_module(name: str):  # noqa: ANN202 - a module of the optional docker backend, or None
    try:
        with _IMPORT_LOCK:
            return importlib.import_module(f"agent_core.sandbox.docker.{name}")
    except ImportError:
        return None


def docker_status(settings: Settings | SandboxSettings) -> tuple[bool, str]:
    """(usable, reason) for the Docker backend."""
    module = _docker_module("engine")
    if module is None or not hasattr(module, "docker_available"):
        return False, "the Docker backend is not installed"
    try:
        return module.docker_available(settings)
    except Exception as exc:  # noqa: BLE001 - any failure to reach the engine means "unavailable"
        return False, f"Docker engine check failed: {exc}"


def describe_backend_choice(settings: Settings | SandboxSettings) -> tuple[str, str]:
    """The backend `make_sandbox` would use, and why (for `agentls sandbox doctor`)."""
    wanted = _sandbox_settings(settings).backend
    if wanted != "auto":
        ok, reason = _availability(wanted, settings)
        return wanted, (
            "explicitly configured; " + reason
        ) if ok else f"explicitly configured but unavailable: {reason}"
    docker_ok, docker_reason = docker_status(settings)
    if docker_ok:
        return "docker", docker_reason
    bwrap_ok, bwrap_reason = probe_bwrap()
    if bwrap_ok:
        return "bubblewrap", f"Docker unavailable ({docker_reason}); {bwrap_reason}"
    return "process", f"Docker unavailable ({docker_reason}); bubblewrap unavailable ({bwrap_reason}); NOT isolated"


def _availability(name: str, settings: Settings | SandboxSettings) -> tuple[bool, str]:
    if name == "docker":
        return docker_status(settings)
    if name == "bubblewrap":
        return probe_bwrap()
    if name == "process":
        return True, "plain process with rlimits (not isolated)"
    return False, f"unknown sandbox backend {name!r}"


def _build(name: str, settings: Settings | SandboxSettings) -> Sandbox:
    sandbox_settings = _sandbox_settings(settings)
    if name == "docker":
        module = _docker_module("run")
        return module.DockerSandbox(sandbox_settings)
    if name == "bubblewrap":
        return BubblewrapSandbox(sandbox_settings)
    return ProcessSandbox(sandbox_settings)


def make_sandbox(settings: Settings | SandboxSettings, announce: Announce | None = None) -> Sandbox:
    """Build the configured sandbox; raise SandboxError when an explicit backend cannot run."""
    name, reason = describe_backend_choice(settings)
    wanted = _sandbox_settings(settings).backend
    if wanted != "auto":
        ok, why = _availability(wanted, settings)
        if not ok:
            raise SandboxError(f"sandbox backend {wanted!r} is unavailable: {why}")
    if name == "process" and announce is not None and "process" not in _warned:
        _warned.add("process")
        announce(f"{NOT_ISOLATED_WARNING} ({reason})")
    return _build(name, settings)



def sandbox_for_run(settings: Settings, hooks: RunHooks, run_id: str) -> Sandbox:
    """The configured sandbox for one run; a warning about it (not isolated, say) goes to the run's hooks."""
    return make_sandbox(settings, lambda text: hooks.emit(MessageEvent(run_id=run_id, level="warning", text=text)))

def sweep_leftovers() -> list[str]:
    """What a previous crash left: sandboxed processes, stale agentls-* temp dirs and labelled containers
    of dead owners.

    Called once when the language server starts (in a background thread: a
    slow or absent Docker engine must not delay the editor). Returns what was
    removed, for the log.
    """
    removed = [f"process {pid}" for pid in kill_orphaned_runs()]  # first: they may be using the dirs
    removed += [str(p) for p in remove_leftovers()]
    module = _docker_module("sweep")
    if module is None:  # the docker SDK is optional at run time
        return removed
    return removed + [f"container {name}" for name in module.remove_leftover_containers()]
