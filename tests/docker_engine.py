"""A real Docker engine and sandbox image for tests marked `docker` (shared by tests/docker and the containment suite).

Uses DOCKER_HOST when set (CI starts the engine); otherwise starts the
private engine with scripts/start-dockerd.sh and stops it again at the end of
the session. The sandbox image is built (base image by debootstrap, then
`agentls sandbox build-image`) when missing. An engine that cannot be reached
FAILS the test with the reason: Docker tests are never silently skipped.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
IMAGE = os.environ.get("AGENTLS_TEST_DOCKER_IMAGE", "agentls/sandbox:local")


def start_engine() -> bool:
    """Make DOCKER_HOST point at an engine that answers; True when this call started it."""
    from agent_core.sandbox.docker import engine

    if os.environ.get("DOCKER_HOST"):
        ok, reason = _ping(engine)
        if not ok:
            pytest.fail(f"DOCKER_HOST={os.environ['DOCKER_HOST']} is set but no engine answers: {reason}")
        return False
    already = _script_engine_answers()
    proc = subprocess.run(["bash", str(ROOT / "scripts/start-dockerd.sh")], capture_output=True, text=True,
                          timeout=600, check=False)
    exports = [line for line in proc.stdout.splitlines() if line.startswith("export DOCKER_HOST=")]
    if proc.returncode != 0 or not exports:
        pytest.fail(f"could not start a Docker engine with scripts/start-dockerd.sh:\n{proc.stderr[-2000:]}")
    os.environ["DOCKER_HOST"] = exports[-1].split("=", 1)[1]
    return not already


def _script_engine_answers() -> bool:
    sock = Path(os.environ.get("AGENTLS_DOCKERD_DIR", "/tmp/dockerd.agentls")) / "docker.sock"
    return sock.exists()


def _ping(engine) -> tuple[bool, str]:
    try:
        client = engine.connect()
        client.ping()
        client.close()
        return True, "ok"
    except Exception as exc:  # noqa: BLE001 - reported as a failure
        return False, str(exc)


def ensure_image() -> None:
    """Build the sandbox image if the engine lacks it (CI builds it up front; this is the slow fallback)."""
    from agent_core.sandbox.docker import build, engine

    if engine.image_exists(IMAGE):
        return
    base = subprocess.run(["bash", str(ROOT / "scripts/make-base-image.sh")], capture_output=True, text=True,
                          timeout=1200, check=False)
    if base.returncode != 0:
        pytest.fail(f"could not make the base image:\n{base.stderr[-2000:]}")
    build.build_image(tag=IMAGE, log=lambda line: None)


def stop_engine() -> None:
    subprocess.run(["bash", str(ROOT / "scripts/stop-dockerd.sh")], capture_output=True, timeout=60, check=False)
    os.environ.pop("DOCKER_HOST", None)


@pytest.fixture(scope="session")
def docker_engine():
    """DOCKER_HOST of a live engine that has the sandbox image; yields the image name."""
    started = start_engine()
    try:
        ensure_image()
        yield IMAGE
    finally:
        if started:
            stop_engine()
