"""The Docker sandbox backend: one locked-down container per run (the only module importing `docker`).

Each run gets a fresh container from `settings.sandbox.docker_image` with no
network, a CPU quota, a memory limit without swap, a pids limit, a read-only
root filesystem with a tmpfs `/tmp`, the shadow workspace bind-mounted at its
own path as the only writable place, uid 65534, every capability dropped,
`no-new-privileges` and a clean environment. A wall-clock timeout kills the
container; the container is removed in every outcome, including when the
awaiting task is cancelled. Containers carry labels so that
`remove_leftover_containers` can clean up after a crashed process.

The SDK is blocking; each run executes in a worker thread.
"""

from __future__ import annotations

import asyncio
import os
import socket
import threading
import time
import uuid
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import requests
from docker.context import ContextAPI
from docker.context.config import get_current_context_name
from docker.errors import DockerException, ImageNotFound, NotFound
from docker.tls import TLSConfig
from docker.types import Mount, Ulimit
from docker.utils import kwargs_from_env
from docker.utils.config import find_config_file

from agent_core.sandbox.base import CommandResult, SandboxError, sandbox_env
from agent_core.sandbox.docker_copy import copies_workspace, extract_back, workspace_tar

LABEL_RUN = "agentls.run"
LABEL_OWNER = "agentls.owner_pid"
LABEL_HOST = "agentls.host"
CONTAINER_UID = 65534
IMAGE_PYTHON = "/usr/bin/python3"
OUTPUT_CAP = 200_000
PING_TIMEOUT_S = 3.0
DEFAULT_SOCKET = "/var/run/docker.sock"


@dataclass(frozen=True)
class Endpoint:
    """The engine to talk to, and which setting chose it (shown by `agentls sandbox doctor`)."""

    url: str
    source: str
    tls: TLSConfig | None = None

    def describe(self) -> str:
        return f"{self.url}{' over TLS' if self.tls else ''} (from {self.source})"


def engine_endpoint(env: Mapping[str, str] | None = None) -> Endpoint:
    """Resolve the engine as the docker CLI does: DOCKER_HOST (+ TLS variables), DOCKER_CONTEXT, the current
    `docker context` in the docker config file, else the default socket. The SDK reads the variables
    (`kwargs_from_env`) and the contexts (`ContextAPI`); this only records which one decided."""
    env = os.environ if env is None else env
    if env.get("DOCKER_HOST"):
        params = kwargs_from_env(environment=dict(env))
        tls = params.get("tls")
        via = " with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH" if tls else ""
        return Endpoint(params["base_url"], f"DOCKER_HOST{via}", tls)
    name, source = env.get("DOCKER_CONTEXT"), "DOCKER_CONTEXT"
    if not name:
        name, source = get_current_context_name(), f"currentContext in {find_config_file()}"
    if name and name != "default":
        context = ContextAPI.get_context(name)
        if context is None or not context.Host:
            raise SandboxError(f"docker context {name!r} (from {source}) does not exist or has no docker endpoint")
        url = context.Host.replace("http+unix://", "unix://", 1)  # the SDK's own spelling of a socket
        return Endpoint(url, f"docker context {name!r}, {source}", context.TLSConfig)
    rootless = Path(env.get("XDG_RUNTIME_DIR") or f"/run/user/{os.getuid()}") / "docker.sock"
    if not Path(DEFAULT_SOCKET).exists() and rootless.exists():
        return Endpoint(f"unix://{rootless}", "the rootless engine's socket in XDG_RUNTIME_DIR")
    return Endpoint(f"unix://{DEFAULT_SOCKET}", "the default socket")


def engine_address() -> str:
    """The engine's endpoint and where it came from, for messages."""
    try:
        return engine_endpoint().describe()
    except SandboxError as exc:
        return str(exc)


class _EngineAPI(docker.APIClient):
    """The SDK's API client, but the engine's own CA file wins over REQUESTS_CA_BUNDLE / CURL_CA_BUNDLE.

    requests lets those variables replace a session's `verify` path on every request, so with
    either set (common: many machines point them at the system bundle) a TLS engine's
    DOCKER_CERT_PATH/ca.pem is ignored and verification fails. Measured here; no SDK option covers it.
    """

    def merge_environment_settings(self, url, proxies, stream, verify, cert):  # noqa: ANN001, ANN201 - requests'
        merged = super().merge_environment_settings(url, proxies, stream, verify, cert)
        if isinstance(self.verify, str) and verify in (None, True):
            merged["verify"] = self.verify
        return merged


class _EngineClient(docker.DockerClient):
    """DockerClient over `_EngineAPI` (DockerClient.__init__ only builds its `api`)."""

    def __init__(self, **kwargs: Any) -> None:
        self.api = _EngineAPI(**kwargs)
        self.endpoint_url = str(kwargs["base_url"])  # the SDK rewrites a socket's base_url to http+docker://


def connect(timeout_s: float = PING_TIMEOUT_S) -> docker.DockerClient:
    """A client for the engine `engine_endpoint()` names; raises DockerException or SandboxError when unusable."""
    where = engine_endpoint()
    return _EngineClient(base_url=where.url, tls=where.tls or False, timeout=timeout_s,
                         use_ssh_client=where.url.startswith("ssh://"))


def why_unreachable(exc: BaseException) -> str:
    """One line on why the engine did not answer; a certificate problem says which files to check."""
    text = " ".join(str(e) for e in _chain(exc))
    if "CERTIFICATE_VERIFY_FAILED" in text or "certificate verify failed" in text:
        return ("TLS: the engine's certificate is not signed by the CA in DOCKER_CERT_PATH/ca.pem "
                "(or the context's TLS files), or names another host")
    rejected = ("SSLEOFError", "EOF occurred in violation of protocol", "alert bad certificate",
                "alert unknown ca", "alert certificate required")
    if any(sign in text for sign in rejected):
        return ("TLS: the engine closed the connection in the handshake: it does not accept the client "
                "certificate (DOCKER_CERT_PATH/cert.pem and key.pem, or the context's)")
    return _first_line(exc)


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def docker_available(settings: Any) -> tuple[bool, str]:
    """Whether the Docker backend can run now (engine answers and the image exists), and why."""
    image = _sandbox_settings(settings).docker_image
    try:
        where = engine_endpoint().describe()
        client = connect()
    except SandboxError as exc:
        return False, str(exc)
    except (DockerException, requests.RequestException) as exc:
        return False, f"no Docker engine answers at {engine_address()}: {why_unreachable(exc)}"
    try:
        client.ping()
        client.images.get(image)
    except ImageNotFound:
        return False, (
            f"the Docker engine at {where} answers but has no image {image!r}; "
            "build it with `agentls sandbox build-image`"
        )
    except (DockerException, requests.RequestException) as exc:
        return False, f"no Docker engine answers at {where}: {why_unreachable(exc)}"
    finally:
        client.close()
    return True, f"the Docker engine at {where} answers and has image {image!r}"


def container_options(sandbox: Any, workspace: Path, timeout_s: float) -> dict[str, Any]:
    """Keyword arguments of `containers.create` that make up the isolation (pure; unit-tested)."""
    ws = str(workspace)
    mib = 1024 * 1024
    return {
        "working_dir": ws,
        "network_mode": "none",
        "nano_cpus": int(sandbox.cpus * 1_000_000_000),
        "mem_limit": sandbox.memory_mb * mib,
        "memswap_limit": sandbox.memory_mb * mib,
        "pids_limit": sandbox.pids,
        "read_only": True,
        "tmpfs": {"/tmp": f"rw,nosuid,nodev,size={min(sandbox.file_size_mb, sandbox.memory_mb // 2)}m"},
        "volumes": {ws: {"bind": ws, "mode": "rw"}},
        "user": container_user(),
        "cap_drop": ["ALL"],
        "security_opt": ["no-new-privileges"],
        "ulimits": [
            Ulimit(name="fsize", soft=sandbox.file_size_mb * mib, hard=sandbox.file_size_mb * mib),
            Ulimit(name="core", soft=0, hard=0),
            Ulimit(name="nofile", soft=1024, hard=1024),
        ],
        "labels": {
            LABEL_RUN: "1",
            LABEL_OWNER: str(os.getpid()),
            LABEL_HOST: socket.gethostname(),
            "agentls.timeout_s": str(timeout_s),
        },
        "stdin_open": False,
        "tty": False,
        "detach": True,
    }


def container_user() -> str:
    """uid:gid inside the container: 65534 when we are root (the workspace is handed to it), else our own."""
    if os.geteuid() == 0:
        return f"{CONTAINER_UID}:{CONTAINER_UID}"
    return f"{os.getuid()}:{os.getgid()}"


class DockerSandbox:
    """Runs each command in a fresh, locked-down container of the configured image."""

    name = "docker"
    isolated = True
    python = IMAGE_PYTHON

    def __init__(self, settings: Any, client: Any | None = None) -> None:
        self._sandbox = _sandbox_settings(settings)
        self._client = client
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    self._client = connect(timeout_s=60.0)
                except DockerException as exc:
                    raise SandboxError(f"no Docker engine answers at {engine_address()}: {why_unreachable(exc)}") from exc
            return self._client

    def _image_and_env(self, workspace: Path, env: dict[str, str] | None) -> tuple[str, dict[str, str]]:
        """The project's dependency image when built (project_image.py), and a src/ layout on PYTHONPATH."""
        from agent_core.sandbox.cleanup import origin_of
        from agent_core.sandbox.project_image import project_image_tag, src_pythonpath

        inner_env = sandbox_env(env)
        src = src_pythonpath(workspace)
        if src:
            inner_env["PYTHONPATH"] = ":".join(p for p in (inner_env.get("PYTHONPATH"), src) if p)
        origin = origin_of(workspace)
        tag = project_image_tag(self._sandbox.docker_image, origin if origin and origin.is_dir() else workspace)
        return (tag if tag and image_exists(tag) else self._sandbox.docker_image), inner_env

    async def run(
        self,
        argv: list[str],
        workspace: Path,
        *,
        timeout_s: float | None = None,
        env: dict[str, str] | None = None,
    ) -> CommandResult:
        """Run argv in a new container; cancellation kills and removes it, then re-raises."""
        if not argv:
            raise SandboxError("empty command")
        workspace = Path(workspace).resolve()
        if not workspace.is_dir():
            raise SandboxError(f"workspace {workspace} is not a directory")
        run = _Run(self.client(), f"agentls-run-{uuid.uuid4().hex[:12]}")
        limit = timeout_s or self._sandbox.timeout_s
        image, inner_env = self._image_and_env(workspace, env)
        options = container_options(self._sandbox, workspace, limit)
        url = getattr(self.client(), "endpoint_url", None) or engine_endpoint().url
        run.copy = copies_workspace(self._sandbox.docker_workspace, url)
        if run.copy:  # the engine cannot see our files: an anonymous volume, filled and emptied by archive
            options.pop("volumes")
            if workspace.parent == workspace:
                raise SandboxError("copy mode needs a workspace below /, not / itself")
            options["mounts"] = [Mount(target=str(workspace.parent), source=None, type="volume")]
        job = asyncio.ensure_future(
            asyncio.to_thread(run.execute, argv, workspace, options, limit, inner_env, image)
        )
        try:
            return await asyncio.shield(job)
        except asyncio.CancelledError:
            await asyncio.shield(_abort(run, job))
            raise


async def _abort(run: _Run, job: asyncio.Future) -> None:
    """Stop a cancelled run: flag it, force-remove its container, wait for its thread, remove again."""
    run.cancelled.set()
    await asyncio.to_thread(run.remove)
    try:
        await job
    except BaseException:  # noqa: BLE001 - the run is being thrown away; its outcome does not matter
        pass
    await asyncio.to_thread(run.remove)


class _Run:
    """One container's life, executed in a worker thread."""

    def __init__(self, client: Any, name: str) -> None:
        self.client = client
        self.name = name
        self.cancelled = threading.Event()
        self.copy = False
        self.workspace = Path("/")

    def execute(
        self, argv: list[str], workspace: Path, options: dict[str, Any], timeout_s: float,
        env: dict[str, str], image: str,
    ) -> CommandResult:
        owner = workspace.stat()
        self.workspace = workspace
        _chown_tree(workspace, CONTAINER_UID, CONTAINER_UID)
        try:
            return self._create_and_wait(argv, options, timeout_s, env, image)
        finally:
            self.remove()
            _chown_tree(workspace, owner.st_uid, owner.st_gid)

    def _create_and_wait(
        self, argv: list[str], options: dict[str, Any], timeout_s: float, env: dict[str, str], image: str
    ) -> CommandResult:
        try:
            container = self.client.containers.create(image, argv, name=self.name, environment=env, **options)
        except ImageNotFound as exc:
            raise SandboxError(f"Docker image {image!r} not found; build it with "
                               "`agentls sandbox build-image`") from exc
        except (DockerException, requests.RequestException) as exc:
            raise SandboxError(f"could not create the sandbox container: {_first_line(exc)}") from exc
        if self.cancelled.is_set():
            return CommandResult(exit_code=None, stderr="cancelled")
        started = time.monotonic()
        try:
            if self.copy:
                uid, gid = (int(part) for part in container_user().split(":"))
                container.put_archive(str(self.workspace.parent), workspace_tar(self.workspace, uid, gid))
            container.start()
            exit_code, timed_out = self._wait(container, timeout_s)
            duration = time.monotonic() - started
            container.reload()
            state = container.attrs.get("State", {})
            stdout = _tail(container.logs(stdout=True, stderr=False))
            stderr = _tail(container.logs(stdout=False, stderr=True))
            if self.copy:
                extract_back(container.get_archive(str(self.workspace))[0], self.workspace)
        except (DockerException, requests.RequestException) as exc:
            if self.cancelled.is_set():
                return CommandResult(exit_code=None, stderr="cancelled")
            raise SandboxError(f"the sandbox container failed: {_first_line(exc)}") from exc
        return CommandResult(
            exit_code=None if timed_out else exit_code,
            stdout=stdout,
            stderr=stderr,
            duration_s=duration,
            timed_out=timed_out,
            limit_hit=_limit_hit(state, exit_code, timed_out, stdout + stderr),
        )

    def _wait(self, container: Any, timeout_s: float) -> tuple[int | None, bool]:
        """Wait for the container to exit; on the wall-clock limit kill it. Returns (exit code, timed out)."""
        try:
            status = container.wait(timeout=timeout_s)
            return int(status.get("StatusCode", -1)), False
        except requests.exceptions.ReadTimeout:
            pass
        except requests.exceptions.ConnectionError as exc:
            # requests reports a read timeout on a unix socket as a ConnectionError.
            if "timed out" not in str(exc).lower():
                raise
        try:
            container.kill()
        except (NotFound, DockerException):
            pass
        container.wait(timeout=30)
        return None, True

    def remove(self) -> None:
        """Force-remove the container (kills it if running); a missing container is fine."""
        try:
            self.client.api.remove_container(self.name, force=True, v=True)
        except NotFound:
            pass
        except (DockerException, requests.RequestException):
            pass


def _limit_hit(state: dict[str, Any], exit_code: int | None, timed_out: bool, output: str) -> str | None:
    if timed_out:
        return None
    if state.get("OOMKilled"):
        return "memory"
    if exit_code == 128 + 25 or "File too large" in output:
        return "file_size"
    if exit_code and ("MemoryError" in output or "Cannot allocate memory" in output):
        return "memory"
    if exit_code and ("Resource temporarily unavailable" in output or "BlockingIOError: [Errno 11]" in output):
        return "pids"
    return None


def remove_leftover_containers(all_owners: bool = False) -> list[str]:
    """Remove agentls-labelled containers whose owning process is gone (or all of them); returns their names."""
    try:
        client = connect()
        containers = client.containers.list(all=True, filters={"label": f"{LABEL_RUN}=1"})
    except (DockerException, requests.RequestException, SandboxError):
        return []
    removed = []
    host = socket.gethostname()
    try:
        for container in containers:
            labels = container.labels or {}
            if not all_owners and labels.get(LABEL_HOST) == host and _pid_alive(labels.get(LABEL_OWNER)):
                continue
            try:
                container.remove(force=True, v=True)
                removed.append(container.name)
            except (DockerException, requests.RequestException):
                continue
    finally:
        client.close()
    return removed


def _pid_alive(pid_text: str | None) -> bool:
    try:
        os.kill(int(pid_text or ""), 0)
    except ValueError:
        return False
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _chown_tree(root: Path, uid: int, gid: int) -> None:
    """Give `root` and everything under it (symlinks themselves, never their targets) to uid:gid."""
    if os.geteuid() != 0:
        return
    for dirpath, dirnames, filenames in os.walk(root):
        os.lchown(dirpath, uid, gid)
        for name in dirnames + filenames:
            try:
                os.lchown(os.path.join(dirpath, name), uid, gid)
            except FileNotFoundError:
                continue


def _tail(data: bytes) -> str:
    return data[-OUTPUT_CAP:].decode("utf-8", "replace")


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def _sandbox_settings(settings: Any) -> Any:
    """Accept either the full Settings or its `sandbox` part."""
    return getattr(settings, "sandbox", settings)


def image_exists(tag: str) -> bool:
    """Whether the engine has `tag` locally (never pulls)."""
    client = _connect_or_fail()
    try:
        client.images.get(tag)
        return True
    except ImageNotFound:
        return False
    finally:
        client.close()


def probe_image(image: str, argv: list[str], timeout_s: float = 60.0) -> tuple[int, str]:
    """Run argv once in `image` with no network; returns (exit code, output). For inspecting a base image."""
    client = _connect_or_fail(timeout_s=timeout_s)
    container = None
    try:
        container = client.containers.create(image, argv, network_mode="none", labels={LABEL_RUN: "1",
                                              LABEL_OWNER: str(os.getpid()), LABEL_HOST: socket.gethostname()})
        container.start()
        code = int(container.wait(timeout=timeout_s).get("StatusCode", -1))
        return code, _tail(container.logs(stdout=True, stderr=True))
    except (DockerException, requests.RequestException) as exc:
        raise SandboxError(f"could not run {argv[0]} in {image!r}: {_first_line(exc)}") from exc
    finally:
        if container is not None:
            try:
                container.remove(force=True)
            except (DockerException, requests.RequestException):
                pass
        client.close()


def build_from_context(context: Path, tag: str, on_line: Any = None) -> str:
    """`docker build` of a prepared context with the legacy builder: no pull, no network; returns the image id."""
    client = _connect_or_fail(timeout_s=1800.0)
    image_id = None
    try:
        for chunk in client.api.build(path=str(context), tag=tag, pull=False, network_mode="none",
                                      rm=True, forcerm=True, decode=True):
            if "error" in chunk:
                raise SandboxError(f"docker build failed: {chunk['error'].strip()}")
            line = chunk.get("stream", "").rstrip()
            if line and on_line is not None:
                on_line(line)
            image_id = chunk.get("aux", {}).get("ID", image_id)
    except (DockerException, requests.RequestException) as exc:
        raise SandboxError(f"docker build failed: {_first_line(exc)}") from exc
    finally:
        client.close()
    return image_id or tag


def _connect_or_fail(timeout_s: float = PING_TIMEOUT_S) -> Any:
    try:
        client = connect(timeout_s)
        client.ping()
        return client
    except (DockerException, requests.RequestException) as exc:
        raise SandboxError(f"no Docker engine answers at {engine_address()}: {why_unreachable(exc)}") from exc
