"""Fixtures of the containment suite: one real sandbox per backend, and a host-state check around each payload."""

from __future__ import annotations

import os

import pytest

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.settings import SandboxSettings
from docker_engine import docker_engine  # noqa: F401 - session fixture, re-exported for this directory

# Short limits keep the suite quick; the mechanisms are the same as with the defaults.
LIMITS = {"timeout_s": 4.0, "memory_mb": 256, "pids": 64, "file_size_mb": 64, "cpus": 1.0}
BACKENDS = [pytest.param("docker", marks=pytest.mark.docker), "bubblewrap", "process"]


def containment_settings(backend: str) -> SandboxSettings:
    return SandboxSettings(backend=backend, **LIMITS)


@pytest.fixture(scope="module", params=BACKENDS)
def sandbox(request):
    """A real sandbox of each backend; an unavailable backend FAILS (never skips) with the reason."""
    from agent_core.sandbox.factory import make_sandbox

    if request.param == "docker":
        request.getfixturevalue("docker_engine")
    settings = containment_settings(request.param)
    try:
        return make_sandbox(settings)
    except Exception as exc:  # noqa: BLE001 - reported as a failure with the reason
        pytest.fail(f"sandbox backend {request.param} is not usable on this machine: {exc}")


@pytest.fixture
def arena():
    """A temp dir holding the workspace `ws/` and an attacker-writable `outside/` next to it."""
    root = make_temp_dir("containment")
    os.chmod(root, 0o777)
    outside = root / "outside"
    outside.mkdir()
    os.chmod(outside, 0o777)
    (root / "ws").mkdir()
    yield root
    remove_temp_dir(root)
