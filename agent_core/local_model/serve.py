"""Start, find and stop the local model server (llama.cpp's OpenAI-compatible server).

The server runs under `watchdog` (so it dies with whoever started it) on a
loopback port; a state file `server.json` in the model directory records
it, so other agentls processes reuse it instead of loading the model again.

Hooks for tests and unusual setups (environment):
- `AGENTLS_MODEL_SERVER_CMD`: command template replacing the default
  `{python} {script} ...` ({script}: batched_server.py, llama-cpp-python's
  server with the requests of one prompt decoded together); placeholders
  {python} {script} {model} {alias} {host} {port} {n_ctx} {threads}
  {batch_threads} {cache} {cache_size} {kept}.
- `AGENTLS_MODEL_SERVER_PYTHON`: interpreter that runs the server (it needs llama-cpp-python[server]).
- `AGENTLS_MODEL_START_TIMEOUT`: seconds to wait for the server to answer.
"""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import shutil
import signal
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.parse
import urllib.request
from dataclasses import asdict, dataclass, field
from pathlib import Path

ENV_SERVER_CMD = "AGENTLS_MODEL_SERVER_CMD"
ENV_SERVER_PYTHON = "AGENTLS_MODEL_SERVER_PYTHON"
ENV_START_TIMEOUT = "AGENTLS_MODEL_START_TIMEOUT"
STATE_FILE = "server.json"
DEFAULT_COMMAND = (
    "{python} {script} --model {model} --model_alias {alias} --host {host} --port {port} "
    "--n_ctx {n_ctx} --n_threads {threads} --n_threads_batch {batch_threads} --interrupt_requests false "
    "--cache {cache} --cache_size {cache_size} --kept {kept}"
)  # without `--interrupt_requests false` the server cuts a streamed answer short whenever another request arrives
PROMPT_CACHE_BYTES = 2 << 30  # llama-cpp-python's own default size of its RAM cache of evaluated prompts
# The server runs without that cache (ServerConfig.cache_bytes 0): llama.cpp by itself keeps the last prompt's
# evaluated tokens, and the cache would add the states of the last few prompts, so that a hole of the search
# coming back to a function after a hole elsewhere reads only what it does not share with any of them. On the
# holes of 4 real-history runs' fills it made them slower, not faster (1.06-1.15 times the time: every answer
# saves the whole context's state; bench/fill_server.py, docs/local-model.md). The bundled server keeps earlier
# prompts its own way, without saving any state:
KEPT_PROMPTS = 4  # batched_server.KEPT: earlier prompts' cells kept in the context, so that a hole coming back to a
# function after a hole elsewhere reads only what it shares with none of them (docs/local-model.md)
SERVER_SCRIPT = Path(__file__).with_name("batched_server.py")  # run as a file: the server's Python may lack agentls
SERVER_MODULES = ("llama_cpp", "uvicorn", "fastapi", "sse_starlette", "starlette_context", "pydantic_settings")
LOCAL_EXTRA = "'llama-cpp-python[server]>=0.3'"  # the `local` extra of pyproject.toml


def install_hint(exe: str) -> str:
    """How to add the local model server to the environment of `exe`, in the tool that made it.

    A pipx or uv tool environment has no pip of its own to call (uv's) or must not be changed
    behind its manager's back (pipx's): `pip install` there would go to the wrong environment.
    """
    parts = Path(exe).parts
    if "pipx" in parts and "venvs" in parts:
        return f"pipx inject agentls {LOCAL_EXTRA}"
    if "uv" in parts and "tools" in parts:
        return f"uv tool install --reinstall --with {LOCAL_EXTRA} PATH-OF-YOUR-AGENTLS-CHECKOUT"
    return f"{exe} -m pip install {LOCAL_EXTRA}"


class ServerError(RuntimeError):
    """The model server cannot be started or reached; the message says why."""


def _cores() -> int:
    try:
        return len(os.sched_getaffinity(0))
    except AttributeError:
        return os.cpu_count() or 2


def default_threads() -> int:
    """The threads that write the answer: one core fewer than the process may use (at most 8), and at least one:
    the test runs beside the model need a core. llama.cpp's threads wait for each other at every step, so one
    thread preempted by a test run stalls them all: on 2 cores with a test suite running beside it, 2 threads
    generated 0.7 tokens/s and 1 thread 8.1 (bench/model_speed.py; docs/local-model.md)."""
    return max(1, min(_cores() - 1, 8))


def default_batch_threads() -> int:
    """The threads that read the prompt: every core the process may use (at most 8). Reading a prompt is one
    large step per batch of tokens, not one small step per token, and the test runs beside it yield the CPU
    (nice 19): on 2 cores a 1,360-token prompt took 23.6 s with 2 threads and 43.8 s with 1, and 24.1 s with 2
    beside a yielding test loop (docs/local-model.md). The prompts are most of the model's time in the search's
    fills (a hole's first sample reads its prompt)."""
    return max(1, min(_cores(), 8))


@dataclass
class ServerConfig:
    model_path: Path
    alias: str
    port: int | None = None  # None: a free loopback port
    host: str = "127.0.0.1"
    n_ctx: int = 8192
    threads: int = field(default_factory=default_threads)
    batch_threads: int = field(default_factory=default_batch_threads)
    cache_bytes: int = 0  # the size of the server's cache of evaluated prompts; 0: none (the last prompt only)
    kept_prompts: int = KEPT_PROMPTS  # earlier prompts whose cache cells the bundled server keeps (batch_decoder.Kept)
    start_timeout_s: float = field(default_factory=lambda: float(os.environ.get(ENV_START_TIMEOUT, "180")))


@dataclass
class ServerState:
    """What `server.json` records about a running server."""

    pid: int  # the watchdog's pid; stopping it stops the server
    port: int
    base_url: str
    model_path: str
    alias: str
    log_path: str
    owner_pid: int


@dataclass
class RunningServer:
    state: ServerState
    process: subprocess.Popen | None = None  # set when this process started it

    @property
    def base_url(self) -> str:
        return self.state.base_url

    def stop(self, directory: Path | None = None) -> None:
        """Stop the server (and forget it in the state file of `directory`)."""
        crashed = self.process is not None and self.process.poll() is not None
        if self.process is not None:
            _stop_process(self.process)
        elif not stop_pid(self.state.pid):
            return
        if not crashed:  # a clean stop needs no log; a crash keeps it for the user
            Path(self.state.log_path).unlink(missing_ok=True)
        if directory is not None:
            forget(directory, self.state.pid)


def _stop_process(proc: subprocess.Popen) -> None:
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    if proc.stdin:
        proc.stdin.close()


def stop_pid(pid: int, timeout_s: float = 15.0) -> bool:
    """SIGTERM a process we recorded and wait for it to go; True if it is gone."""
    try:
        os.kill(pid, signal.SIGTERM)
    except ProcessLookupError:
        return True
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if not pid_alive(pid):
            return True
        time.sleep(0.1)
    return not pid_alive(pid)


def pid_alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    try:  # a zombie child counts as gone
        waited, _ = os.waitpid(pid, os.WNOHANG)
        return waited == 0
    except ChildProcessError:
        return True


def port_free(host: str, port: int) -> bool:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        try:
            sock.bind((host, port))
        except OSError:
            return False
    return True


def free_port(host: str = "127.0.0.1") -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind((host, 0))
        return sock.getsockname()[1]


def accepting(host: str, port: int, timeout_s: float = 1.0) -> bool:
    """True when something accepts TCP connections on host:port."""
    try:
        with socket.create_connection((host, port), timeout=timeout_s):
            return True
    except OSError:
        return False


def answers(base_url: str, timeout_s: float = 2.0) -> bool:
    """True when GET {base_url}/models answers 200 (no proxies: this is loopback)."""
    opener = urllib.request.build_opener(urllib.request.ProxyHandler({}))
    try:
        with opener.open(f"{base_url}/models", timeout=timeout_s) as resp:
            return resp.status == 200
    except (urllib.error.URLError, OSError, ValueError):
        return False


def server_python() -> str:
    return os.environ.get(ENV_SERVER_PYTHON) or sys.executable


def build_command(config: ServerConfig, port: int) -> list[str]:
    template = os.environ.get(ENV_SERVER_CMD) or DEFAULT_COMMAND
    values = {
        "python": server_python(), "script": str(SERVER_SCRIPT), "model": str(config.model_path),
        "alias": config.alias, "host": config.host,
        "port": str(port), "n_ctx": str(config.n_ctx), "threads": str(config.threads),
        "batch_threads": str(config.batch_threads),
        "cache": "true" if config.cache_bytes > 0 else "false", "cache_size": str(max(config.cache_bytes, 0)),
        "kept": str(max(config.kept_prompts, 0)),
    }
    try:
        return [token.format(**values) for token in shlex.split(template)]
    except (KeyError, ValueError, IndexError) as exc:
        raise ServerError(f"{ENV_SERVER_CMD} is not a usable command template ({exc!r})") from exc


def _missing_modules(python: str) -> list[str]:
    if python == sys.executable:
        return [m for m in SERVER_MODULES if importlib.util.find_spec(m) is None]
    probe = f"import importlib.util as u; print(' '.join(m for m in {SERVER_MODULES!r} if u.find_spec(m) is None))"
    proc = subprocess.run([python, "-c", probe], capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise ServerError(f"cannot run the server's Python {python}: {proc.stderr.strip()[-200:]}")
    return proc.stdout.split()


def check_command(argv: list[str]) -> None:
    """Refuse early, with the fix, when the server program or llama-cpp-python is missing."""
    exe = argv[0]
    found = (os.path.isfile(exe) and os.access(exe, os.X_OK)) if os.sep in exe else shutil.which(exe) is not None
    if not found:
        raise ServerError(f"the model server program {exe!r} was not found")
    if os.environ.get(ENV_SERVER_CMD):
        return
    missing = _missing_modules(exe)
    if missing:
        raise ServerError(_not_installed(exe, missing))


def _not_installed(python: str, missing: list[str]) -> str:
    names = ", ".join(missing)
    return f"llama-cpp-python's server is not installed in {python} (missing: {names}): {install_hint(python)}"


def missing_runtime() -> str | None:
    """Why the default server command cannot run here (its interpreter lacks llama-cpp-python's server), or None
    (also when AGENTLS_MODEL_SERVER_CMD replaces the command: it is the user's to check)."""
    if os.environ.get(ENV_SERVER_CMD):
        return None
    python = server_python()
    try:
        missing = _missing_modules(python)
    except (ServerError, OSError) as exc:
        return str(exc)
    return _not_installed(python, missing) if missing else None


def log_tail(path: Path, lines: int = 15) -> str:
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return "(no log)"
    return "\n".join(text.rstrip().splitlines()[-lines:]) or "(empty log)"


def _wait_ready(proc: subprocess.Popen, state: ServerState, timeout_s: float) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if proc.poll() is not None:
            raise ServerError(
                f"the model server exited during start (code {proc.returncode}); "
                f"last lines of {state.log_path}:\n{log_tail(Path(state.log_path))}"
            )
        if answers(state.base_url, timeout_s=1.0):
            return
        time.sleep(0.25)
    _stop_process(proc)
    raise ServerError(
        f"the model server did not answer within {timeout_s:.0f} s; last lines of {state.log_path}:\n"
        f"{log_tail(Path(state.log_path))}"
    )


def start_server(config: ServerConfig, directory: Path) -> RunningServer:
    """Start the server under the watchdog, wait until it answers, record it in the state file."""
    if config.port is not None and not port_free(config.host, config.port):
        raise ServerError(f"port {config.port} on {config.host} is taken; choose another with --port or omit it")
    port = config.port if config.port is not None else free_port(config.host)
    argv = build_command(config, port)
    check_command(argv)
    directory.mkdir(parents=True, exist_ok=True)
    log_path = directory / f"server-{port}.log"
    state = ServerState(0, port, f"http://{config.host}:{port}/v1", str(config.model_path), config.alias,
                        str(log_path), os.getpid())
    with log_path.open("wb") as log:
        proc = subprocess.Popen(
            [sys.executable, "-m", "agent_core.local_model.watchdog", "--", *argv],
            stdin=subprocess.PIPE, stdout=log, stderr=subprocess.STDOUT, start_new_session=True,
        )
    state.pid = proc.pid
    try:
        _wait_ready(proc, state, config.start_timeout_s)
    except BaseException:
        _stop_process(proc)
        raise
    _write_state(directory, state)
    return RunningServer(state, proc)


def _write_state(directory: Path, state: ServerState) -> None:
    tmp = directory / (STATE_FILE + f".{os.getpid()}.tmp")
    tmp.write_text(json.dumps(asdict(state)), encoding="utf-8")
    os.replace(tmp, directory / STATE_FILE)


def read_state(directory: Path) -> ServerState | None:
    try:
        return ServerState(**json.loads((directory / STATE_FILE).read_text(encoding="utf-8")))
    except (OSError, ValueError, TypeError):
        return None


def forget(directory: Path, pid: int) -> None:
    """Remove the state file if it still describes the server `pid`."""
    state = read_state(directory)
    if state is not None and state.pid == pid:
        (directory / STATE_FILE).unlink(missing_ok=True)


def _host(state: ServerState) -> str:
    return urllib.parse.urlsplit(state.base_url).hostname or "127.0.0.1"


def find_running(directory: Path, model_path: Path | None = None) -> RunningServer | None:
    """The recorded server if it is alive, answering and (when given) serving `model_path`."""
    state = read_state(directory)
    if state is None:
        return None
    # llama.cpp's server holds /v1/models while it generates: a busy server still accepts connections.
    if not pid_alive(state.pid) or not (answers(state.base_url) or accepting(_host(state), state.port)):
        (directory / STATE_FILE).unlink(missing_ok=True)
        return None
    if model_path is not None and Path(state.model_path).resolve() != model_path.resolve():
        return None
    return RunningServer(state)
