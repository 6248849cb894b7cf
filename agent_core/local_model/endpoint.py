"""The default endpoint: the bundled local model, started on first use.

`ensure_local_endpoint(settings)` is what the LLM client calls for a role
with no `base_url`. It returns the base URL of a running local server:
- one recorded in the model directory's state file that is alive, answering
  and serving the same model file is reused (another agentls process, or
  `agentls model serve` in a terminal);
- otherwise it starts one, tied to this process (it stops when this process
  exits, even on a crash), and says so once on stderr (or via `notify`).

It does not download the model silently: a missing model raises
`LLMUnavailable` telling the user to run `agentls model fetch` (1.1 GB),
unless `AGENTLS_AUTO_FETCH=1` is set, which fetches first. A missing runtime
(llama-cpp-python's server) is said first, and nothing is fetched then: the
model could not run anyway (`not_servable`, which the start-of-run probe,
llm/probe.py, asks too).
"""

from __future__ import annotations

import atexit
import os
import sys
import threading
from collections.abc import Callable
from pathlib import Path

from agent_core.llm.base import LLMUnavailable
from agent_core.local_model.fetch import FetchError, ModelMissing, fetch_model, installed_model
from agent_core.local_model.locks import LockBusy, exclusive, lock_timeout
from agent_core.local_model.registry import UnknownModel, get_spec, model_dir
from agent_core.local_model.serve import (
    RunningServer,
    ServerConfig,
    ServerError,
    find_running,
    missing_runtime,
    start_server,
)
from agent_core.settings import Settings

ENV_AUTO_FETCH = "AGENTLS_AUTO_FETCH"
START_LOCK_MARGIN_S = 30.0  # waited beyond the server start timeout for another process's start

_lock = threading.Lock()
_owned: dict[str, RunningServer] = {}  # model dir -> the server this process started


def _stderr(message: str) -> None:
    print(message, file=sys.stderr, flush=True)


def _auto_fetch() -> bool:
    return os.environ.get(ENV_AUTO_FETCH, "").strip().lower() in {"1", "true", "yes", "on"}


def runtime_missing_sentence(runtime: str) -> str:
    return (f"the bundled local model cannot run here: {runtime}, then `agentls model fetch`; or set "
            "AGENTLS_BASE_URL to an OpenAI-compatible endpoint")


def not_servable(name: str) -> str | None:
    """Why the bundled model `name` cannot be served here (no runtime, not fetched), or None when it can."""
    runtime = missing_runtime()
    if runtime is not None:
        return runtime_missing_sentence(runtime)
    try:
        installed_model(name)
    except (ModelMissing, UnknownModel) as exc:
        return str(exc)
    return None


def resolve_model(name: str, notify: Callable[[str], None] = _stderr) -> Path:
    """The model file to serve, fetching it first only when auto-fetch is on."""
    try:
        return installed_model(name)
    except UnknownModel as exc:
        raise LLMUnavailable(str(exc)) from None
    except ModelMissing as exc:
        runtime = missing_runtime()
        if runtime is not None:  # said before "not downloaded", and nothing fetched: it could not run either
            raise LLMUnavailable(runtime_missing_sentence(runtime)) from None
        if not _auto_fetch() or os.environ.get("AGENTLS_LOCAL_MODEL"):
            raise LLMUnavailable(f"{exc} (or set {ENV_AUTO_FETCH}=1 to fetch it on first use)") from None
    notify(f"agentls: {ENV_AUTO_FETCH} is set; fetching the local model {name} first")
    try:
        return fetch_model(get_spec(name)).path
    except FetchError as exc:
        raise LLMUnavailable(f"could not fetch the local model {name}: {exc}") from None


def _stop_owned() -> None:
    for directory, server in list(_owned.items()):
        server.stop(Path(directory))
        _owned.pop(directory, None)


atexit.register(_stop_owned)


def ensure_local_endpoint(settings: Settings, notify: Callable[[str], None] | None = None) -> str:
    """Base URL ("http://127.0.0.1:PORT/v1") of a running local model server; start one if needed.

    Raises LLMUnavailable with a one-line cause (plus the server's last log
    lines when it died during start).
    """
    notify = notify or _stderr
    name = settings.local_model
    model_path = resolve_model(name, notify)
    directory = model_dir()
    config = ServerConfig(model_path=model_path, alias=settings.model)
    try:
        with _lock, exclusive(directory / "server.lock", _start_lock_wait(config), "starting the local model server"):
            running = find_running(directory, model_path)
            if running is not None:
                return running.base_url
            server = _start_owned(config, directory)
    except LockBusy as exc:
        raise LLMUnavailable(str(exc)) from None
    notify(
        f"agentls: no endpoint configured; started the local model {name} at {server.base_url} "
        f"(pid {server.state.pid}; it stops when this process exits)"
    )
    return server.base_url


def _start_lock_wait(config: ServerConfig) -> float:
    """How long to wait for another process that is starting a server: its start timeout and a margin."""
    return lock_timeout(config.start_timeout_s + START_LOCK_MARGIN_S)


def _start_owned(config: ServerConfig, directory: Path) -> RunningServer:
    previous = _owned.pop(str(directory), None)
    if previous is not None:  # ours, but it died or stopped answering
        previous.stop(directory)
    try:
        server = start_server(config, directory)
    except ServerError as exc:
        raise LLMUnavailable(f"cannot start the local model server: {exc}") from None
    _owned[str(directory)] = server
    return server


def stop_local_endpoint() -> None:
    """Stop the server this process started, if any (also runs at exit)."""
    with _lock:
        _stop_owned()
