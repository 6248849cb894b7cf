"""The Docker sandbox backend: one fresh, locked-down container per command (limits.py says how).

The shadow workspace is handed to the sandbox uid for the run and back after
it. A wall-clock timeout kills the container; the container is removed in
every outcome, including when the awaiting task is cancelled. An engine that
cannot see this machine's files gets the workspace copied in and out
(transfer.py). A bound workspace is watched for what the run adds to it
(diskwatch.py). The run's uid gets a passwd and group entry (identity.py),
bound read-only over the image's /etc files when the engine sees this
machine's files; a copying engine keeps the image's own (its `nobody`, 65534,
is the uid used as root). The SDK is blocking; each run executes in a worker
thread.
"""

from __future__ import annotations

import asyncio
import os
import threading
import time
import uuid
from pathlib import Path
from typing import Any

import requests
from docker.errors import DockerException, ImageNotFound, NotFound
from docker.types import Mount

from agent_core.sandbox.base import CommandResult, SandboxError, sandbox_env
from agent_core.sandbox.cleanup import origin_of
from agent_core.sandbox.constants import SANDBOX_PYTHON, SANDBOX_UID
from agent_core.sandbox.diskwatch import GROWTH_FACTOR, WorkspaceWatch
from agent_core.sandbox.docker.engine import (
    connect,
    engine_address,
    engine_endpoint,
    first_line,
    image_exists,
    sandbox_settings,
    tail,
    why_unreachable,
)
from agent_core.sandbox.docker.limits import container_options, container_user, limit_hit
from agent_core.sandbox.docker.transfer import copies_workspace, extract_back, workspace_tar
from agent_core.sandbox.identity import identity_files
from agent_core.sandbox.project_image import project_image_tag, src_pythonpath


class DockerSandbox:
    """Runs each command in a fresh, locked-down container of the configured image."""

    name = "docker"
    isolated = True
    python = SANDBOX_PYTHON

    def __init__(self, settings: Any, client: Any | None = None) -> None:
        self._sandbox = sandbox_settings(settings)
        self._client = client
        self._lock = threading.Lock()

    def client(self) -> Any:
        with self._lock:
            if self._client is None:
                try:
                    self._client = connect(timeout_s=60.0)
                except DockerException as exc:
                    why = why_unreachable(exc)
                    raise SandboxError(f"no Docker engine answers at {engine_address()}: {why}") from exc
            return self._client

    def _image_and_env(self, workspace: Path, env: dict[str, str] | None) -> tuple[str, dict[str, str]]:
        """The project's dependency image when built (project_image.py), and a src/ layout on PYTHONPATH."""
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
        run.growth_bytes = GROWTH_FACTOR * self._sandbox.file_size_mb * 1024 * 1024
        if run.copy:  # the engine cannot see our files: an anonymous volume, filled and emptied by archive
            options.pop("volumes")
            if workspace.parent == workspace:
                raise SandboxError("copy mode needs a workspace below /, not / itself")
            options["mounts"] = [Mount(target=str(workspace.parent), source=None, type="volume")]
        else:
            uid, gid = (int(part) for part in options["user"].split(":"))
            passwd, group = identity_files(uid, gid)
            options["volumes"].update({str(passwd): {"bind": "/etc/passwd", "mode": "ro"},
                                       str(group): {"bind": "/etc/group", "mode": "ro"}})
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
        self.growth_bytes = 0  # what the run may add to a bound workspace (0: not watched)
        self.watch: WorkspaceWatch | None = None

    def execute(
        self, argv: list[str], workspace: Path, options: dict[str, Any], timeout_s: float,
        env: dict[str, str], image: str,
    ) -> CommandResult:
        owner = workspace.stat()
        self.workspace = workspace
        if self.growth_bytes and not self.copy:  # a copied workspace lives in the engine's volume: not ours to walk
            self.watch = WorkspaceWatch(workspace, self.growth_bytes)
        _chown_tree(workspace, SANDBOX_UID, SANDBOX_UID)
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
            raise SandboxError(f"could not create the sandbox container: {first_line(exc)}") from exc
        if self.cancelled.is_set():
            return CommandResult(exit_code=None, stderr="cancelled")
        started = time.monotonic()
        try:
            if self.copy:
                uid, gid = (int(part) for part in container_user().split(":"))
                container.put_archive(str(self.workspace.parent), workspace_tar(self.workspace, uid, gid))
            container.start()
            exit_code, stopped = self._wait(container, timeout_s)
            timed_out = stopped == "timeout"
            duration = time.monotonic() - started
            container.reload()
            state = container.attrs.get("State", {})
            stdout = tail(container.logs(stdout=True, stderr=False))
            stderr = tail(container.logs(stdout=False, stderr=True))
            if self.copy:
                extract_back(container.get_archive(str(self.workspace))[0], self.workspace)
        except (DockerException, requests.RequestException) as exc:
            if self.cancelled.is_set():
                return CommandResult(exit_code=None, stderr="cancelled")
            raise SandboxError(f"the sandbox container failed: {first_line(exc)}") from exc
        if stopped == "workspace_size" and self.watch is not None:
            stderr += "\n" + self.watch.describe()
        return CommandResult(
            exit_code=None if stopped else exit_code,
            stdout=stdout,
            stderr=stderr,
            duration_s=duration,
            timed_out=timed_out,
            limit_hit="workspace_size" if stopped == "workspace_size" else limit_hit(
                state, exit_code, timed_out, stdout + stderr),
        )

    def _wait(self, container: Any, timeout_s: float) -> tuple[int | None, str | None]:
        """Wait for the container to exit; at the wall-clock limit, or when the bound workspace has grown past its
        bound (diskwatch.py), kill it. Returns (exit code, None | "timeout" | "workspace_size")."""
        deadline = time.monotonic() + timeout_s
        stopped = "timeout"
        while (left := deadline - time.monotonic()) > 0:
            try:
                status = container.wait(timeout=min(left, self.watch.interval) if self.watch else left)
                return int(status.get("StatusCode", -1)), None
            except requests.exceptions.ReadTimeout:
                pass
            except requests.exceptions.ConnectionError as exc:
                # requests reports a read timeout on a unix socket as a ConnectionError.
                if "timed out" not in str(exc).lower():
                    raise
            if self.watch is not None and self.watch.grown():
                stopped = "workspace_size"
                break
        try:
            container.kill()
        except (NotFound, DockerException):
            pass
        container.wait(timeout=30)
        return None, stopped

    def remove(self) -> None:
        """Force-remove the container (kills it if running); a missing container is fine."""
        try:
            self.client.api.remove_container(self.name, force=True, v=True)
        except NotFound:
            pass
        except (DockerException, requests.RequestException):
            pass


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
