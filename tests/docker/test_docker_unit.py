"""Docker backend logic with the SDK stubbed at its API boundary (the real engine is in test_docker_engine.py)."""

from __future__ import annotations

import asyncio
import os
import threading
import time

import pytest
import requests

from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.docker.build import BaseInfo, dockerfile, parse_probe
from agent_core.sandbox.docker.engine import docker_available
from agent_core.sandbox.docker.limits import container_options
from agent_core.sandbox.docker.run import DockerSandbox
from agent_core.settings import SandboxSettings


class FakeContainer:
    def __init__(self, client, wait_behaviour, state):
        self.client, self.wait_behaviour, self.attrs = client, wait_behaviour, {"State": state}
        self.killed = False

    def start(self):
        self.client.calls.append("start")

    def wait(self, timeout=None):
        self.client.calls.append(f"wait:{timeout}")
        return self.wait_behaviour(self, timeout)

    def kill(self):
        self.killed = True
        self.client.calls.append("kill")

    def reload(self):
        pass

    def logs(self, stdout=True, stderr=True):
        return b"out\n" if stdout else b"err\n"


class FakeClient:
    """Records what the backend asks of the SDK."""

    def __init__(self, wait_behaviour, state=None):
        self.calls, self.created, self.removed = [], [], []
        self.wait_behaviour, self.state = wait_behaviour, state or {"OOMKilled": False}
        self.containers, self.api = self, self
        self.gone = threading.Event()

    def create(self, image, argv, name, environment, **options):
        self.created.append({"image": image, "argv": argv, "name": name, "env": environment, **options})
        return FakeContainer(self, self.wait_behaviour, self.state)

    def remove_container(self, name, force, v):
        self.removed.append((name, force))
        self.gone.set()


def exits(code):
    return lambda container, timeout: {"StatusCode": code}


def test_container_options_lock_everything_down(tmp_path):
    settings = SandboxSettings(cpus=1.0, memory_mb=1024, pids=128, file_size_mb=64)
    opts = container_options(settings, tmp_path, 30.0)
    assert opts["network_mode"] == "none"
    assert opts["nano_cpus"] == 1_000_000_000
    assert opts["mem_limit"] == opts["memswap_limit"] == 1024 * 1024 * 1024
    assert opts["pids_limit"] == 128
    assert opts["read_only"] is True
    assert list(opts["tmpfs"]) == ["/tmp"]
    assert opts["volumes"] == {str(tmp_path): {"bind": str(tmp_path), "mode": "rw"}}
    assert opts["cap_drop"] == ["ALL"] and opts["security_opt"] == ["no-new-privileges"]
    assert opts["labels"]["agentls.run"] == "1" and opts["labels"]["agentls.owner_pid"] == str(os.getpid())
    assert opts["user"] == ("65534:65534" if os.geteuid() == 0 else f"{os.getuid()}:{os.getgid()}")
    assert {u["Name"]: u["Hard"] for u in opts["ulimits"]}["fsize"] == 64 * 1024 * 1024


async def test_success_returns_output_and_removes_container(tmp_path, monkeypatch):
    monkeypatch.setenv("OPENAI_API_KEY", "sk-host-secret")
    client = FakeClient(exits(0))
    sandbox = DockerSandbox(SandboxSettings(docker_image="img:test"), client=client)
    result = await sandbox.run(["python3", "-c", "pass"], tmp_path, timeout_s=5, env={"MY_TOKEN": "t", "A": "1"})
    assert (result.exit_code, result.stdout, result.stderr, result.timed_out) == (0, "out\n", "err\n", False)
    created = client.created[0]
    assert created["image"] == "img:test" and created["argv"] == ["python3", "-c", "pass"]
    assert created["env"]["A"] == "1" and "MY_TOKEN" not in created["env"]
    assert "sk-host-secret" not in repr(created["env"])
    assert client.removed and client.removed[0][0] == created["name"]


async def test_timeout_kills_and_removes(tmp_path):
    def slow(container, timeout):
        if not container.killed:
            time.sleep(timeout)  # as an engine's wait does, up to its timeout
            raise requests.exceptions.ReadTimeout("read timed out")
        return {"StatusCode": 137}

    client = FakeClient(slow)
    result = await DockerSandbox(SandboxSettings(), client=client).run(["sleep", "9"], tmp_path, timeout_s=2)
    assert result.timed_out and result.exit_code is None
    waits = [float(call.split(":")[1]) for call in client.calls[: client.calls.index("kill")] if "wait:" in call]
    assert "kill" in client.calls and 1.9 <= sum(waits) <= 2.5, "waited the limit (in steps: the workspace watch)"
    assert client.removed


async def test_oom_is_reported_as_memory_limit(tmp_path):
    client = FakeClient(exits(137), state={"OOMKilled": True})
    result = await DockerSandbox(SandboxSettings(), client=client).run(["python3"], tmp_path)
    assert result.limit_hit == "memory" and result.exit_code == 137


async def test_cancel_removes_container_and_reraises(tmp_path):
    started = threading.Event()

    def block_until_removed(container, timeout):
        started.set()
        container.client.gone.wait(10)
        raise requests.exceptions.ConnectionError("container gone")

    client = FakeClient(block_until_removed)
    task = asyncio.create_task(DockerSandbox(SandboxSettings(), client=client).run(["sleep", "60"], tmp_path))
    await asyncio.to_thread(started.wait, 5)
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert client.removed and all(force for _, force in client.removed)


async def test_crash_of_the_sdk_still_removes(tmp_path):
    def boom(container, timeout):
        raise requests.exceptions.ConnectionError("engine went away")

    client = FakeClient(boom)
    with pytest.raises(SandboxError, match="engine went away"):
        await DockerSandbox(SandboxSettings(), client=client).run(["true"], tmp_path)
    assert client.removed


async def test_workspace_ownership_is_handed_over_and_restored(tmp_path):
    (tmp_path / "f.py").write_text("x = 1\n")
    seen = {}

    def look(container, timeout):
        seen["uid"] = (tmp_path / "f.py").stat().st_uid
        return {"StatusCode": 0}

    await DockerSandbox(SandboxSettings(), client=FakeClient(look)).run(["true"], tmp_path)
    assert seen["uid"] == (65534 if os.geteuid() == 0 else os.getuid())
    assert (tmp_path / "f.py").stat().st_uid == os.getuid()


def test_unreachable_engine_is_reported_not_raised(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    ok, reason = docker_available(SandboxSettings())
    assert not ok and f"{tmp_path}/none.sock" in reason


@pytest.mark.parametrize(
    ("output", "expected"),
    [
        ("3.11 x86_64 2.36\n", BaseInfo("3.11", "x86_64", "2.36")),
        ("warning\n3.12 aarch64 0\n", BaseInfo("3.12", "aarch64", "0")),
    ],
)
def test_parse_probe(output, expected):
    assert parse_probe(output) == expected


def test_parse_probe_rejects_garbage():
    with pytest.raises(SandboxError, match="no working python3"):
        parse_probe("sh: python3: not found\n")


def test_pip_targets_match_the_image():
    args = BaseInfo("3.11", "x86_64", "2.36").pip_target_args()
    assert args[args.index("--python-version") + 1] == "3.11"
    assert "manylinux_2_36_x86_64" in args and "--only-binary=:all:" in args


def test_dockerfile_installs_offline_with_a_cached_requirements_layer():
    text = dockerfile("agentls/base:local", with_requirements=True)
    assert text.startswith("FROM agentls/base:local\n")
    assert text.count("--no-index") == 2
    assert text.index("pytest hypothesis coverage") < text.index("requirements.txt")
    assert "requirements" not in dockerfile("b", with_requirements=False)


def test_a_missing_socket_is_said_in_words(monkeypatch, tmp_path):
    monkeypatch.setenv("DOCKER_HOST", f"unix://{tmp_path}/none.sock")
    ok, reason = docker_available(SandboxSettings())
    assert not ok
    assert reason == (f"no Docker engine answers at unix://{tmp_path}/none.sock (from DOCKER_HOST): "
                      "the socket does not exist (is the Docker engine running?)")


def test_a_refused_port_is_said_in_words(monkeypatch):
    import socket

    with socket.socket() as closed:  # a port that was free a moment ago: nothing listens there
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    monkeypatch.setenv("DOCKER_HOST", f"tcp://127.0.0.1:{port}")
    ok, reason = docker_available(SandboxSettings())
    assert not ok
    assert reason.endswith(": the connection was refused (nothing listens there)"), reason
    assert "Error(" not in reason and "HTTPConnectionPool" not in reason
