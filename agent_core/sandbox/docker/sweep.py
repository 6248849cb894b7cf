"""Removal of the sandbox containers a crashed agentls process left behind.

Every container a run or a probe creates carries limits.owner_labels(); the
server sweeps at start (factory.sweep_leftovers) and removes those whose
owning process on this host is gone. Containers of another host are removed
only when asked for all owners: their pid cannot be checked from here.
"""

from __future__ import annotations

import os
import socket

import requests
from docker.errors import DockerException

from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.docker.engine import connect
from agent_core.sandbox.docker.limits import LABEL_HOST, LABEL_OWNER, LABEL_RUN


def remove_leftover_containers(all_owners: bool = False) -> list[str]:
    """Remove agentls-labelled containers whose owning process is gone (or all of them); returns their names."""
    try:
        client = connect()
        # a container removed between the listing and its inspection (a run ending now) is not an error
        containers = client.containers.list(all=True, filters={"label": f"{LABEL_RUN}=1"}, ignore_removed=True)
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
