"""Which Docker engine to talk to, a client for it, and whether it can run the sandbox now.

The engine is found as the docker CLI finds it: DOCKER_HOST (with the TLS
variables), DOCKER_CONTEXT, the current `docker context` of the docker config
file, a rootless engine's socket, else the default socket. The SDK reads the
variables and the contexts; this module records which of them decided, for
`agentls sandbox doctor`, and turns connection failures into one readable line.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import docker
import requests
from docker.context import ContextAPI
from docker.context.config import get_current_context_name
from docker.errors import DockerException, ImageNotFound
from docker.tls import TLSConfig
from docker.utils import kwargs_from_env
from docker.utils.config import find_config_file

from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.constants import OUTPUT_CAP

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

    def merge_environment_settings(self, url, proxies, stream, verify, cert) -> Any:  # noqa: ANN001 - requests'
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


def connect_or_fail(timeout_s: float = PING_TIMEOUT_S) -> Any:
    """A client whose engine answered a ping; SandboxError saying why otherwise."""
    try:
        client = connect(timeout_s)
        client.ping()
        return client
    except (DockerException, requests.RequestException) as exc:
        raise SandboxError(f"no Docker engine answers at {engine_address()}: {why_unreachable(exc)}") from exc


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
    for cause in _os_errors(exc):
        for kind, sentence in _OS_ERROR_SENTENCES:
            if isinstance(cause, kind):
                return sentence
    return first_line(exc)


_OS_ERROR_SENTENCES: tuple[tuple[type[BaseException], str], ...] = (
    (FileNotFoundError, "the socket does not exist (is the Docker engine running?)"),
    (ConnectionRefusedError, "the connection was refused (nothing listens there)"),
    (PermissionError, "permission denied on the socket (is this user in the docker group?)"),
    (TimeoutError, "it did not answer in time"),
)


def _os_errors(exc: BaseException) -> list[BaseException]:
    """The OS errors behind an SDK error: in its chain, or packed into an exception's args (urllib3 wraps
    them as `('Connection aborted.', FileNotFoundError(...))`)."""
    found: list[BaseException] = []
    pending: list[object] = list(_chain(exc))
    seen: set[int] = set()
    while pending:
        item = pending.pop(0)
        if id(item) in seen:
            continue
        seen.add(id(item))
        if isinstance(item, OSError) and type(item).__module__ == "builtins":
            found.append(item)
        if isinstance(item, BaseException):
            pending += [*item.args, item.__cause__, item.__context__]
        elif isinstance(item, tuple):
            pending += list(item)
    return found


def _chain(exc: BaseException | None) -> list[BaseException]:
    seen: list[BaseException] = []
    while exc is not None and exc not in seen:
        seen.append(exc)
        exc = exc.__cause__ or exc.__context__
    return seen


def first_line(exc: BaseException) -> str:
    """The first line of an SDK error (its text can hold a whole HTTP body), capped for messages."""
    text = str(exc).strip() or type(exc).__name__
    return text.splitlines()[0][:300]


def tail(data: bytes) -> str:
    """The last OUTPUT_CAP bytes of a container's log, decoded."""
    return data[-OUTPUT_CAP:].decode("utf-8", "replace")


def sandbox_settings(settings: Any) -> Any:
    """Accept either the full Settings or its `sandbox` part."""
    return getattr(settings, "sandbox", settings)


def docker_available(settings: Any) -> tuple[bool, str]:
    """Whether the Docker backend can run now (engine answers and the image exists), and why."""
    image = sandbox_settings(settings).docker_image
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


def image_exists(tag: str) -> bool:
    """Whether the engine has `tag` locally (never pulls)."""
    client = connect_or_fail()
    try:
        client.images.get(tag)
        return True
    except ImageNotFound:
        return False
    finally:
        client.close()
