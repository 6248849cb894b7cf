"""Which engine the Docker backend talks to, and what chose it: DOCKER_HOST, DOCKER_CONTEXT, the current context.

Contexts are written by the SDK's own ContextAPI into a private DOCKER_CONFIG
(the docker CLI's format); no engine is needed to resolve them.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from docker.context import ContextAPI

from agent_core.cli import main as cli_main
from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.docker.engine import DEFAULT_SOCKET, engine_endpoint


@pytest.fixture
def docker_config(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    config = tmp_path / "docker-config"
    config.mkdir()
    (config / "config.json").write_text("{}")
    monkeypatch.setenv("DOCKER_CONFIG", str(config))
    ContextAPI.create_context("colima", host="unix:///home/u/.colima/default/docker.sock")
    ContextAPI.create_context("desktop", host="unix:///home/u/.docker/desktop/docker.sock")
    return config


def _use(config: Path, name: str) -> None:
    (config / "config.json").write_text(json.dumps({"currentContext": name}))


@pytest.mark.parametrize(
    "env, current, url, source",
    [
        ({"DOCKER_HOST": "tcp://10.0.0.5:2375", "DOCKER_CONTEXT": "desktop"}, "colima",
         "tcp://10.0.0.5:2375", "DOCKER_HOST"),
        ({"DOCKER_CONTEXT": "desktop"}, "colima", "unix:///home/u/.docker/desktop/docker.sock",
         "docker context 'desktop', DOCKER_CONTEXT"),
        ({}, "colima", "unix:///home/u/.colima/default/docker.sock",
         "docker context 'colima', currentContext in {cfg}"),
    ],
)
def test_endpoint_follows_the_docker_cli_order(docker_config: Path, env, current, url, source):
    _use(docker_config, current)
    found = engine_endpoint(env)
    assert (found.url, found.source, found.tls) == (url, source.format(cfg=docker_config / "config.json"), None)


def test_default_context_is_the_default_socket(docker_config: Path):
    _use(docker_config, "default")
    found = engine_endpoint({"XDG_RUNTIME_DIR": str(docker_config / "no-runtime")})
    assert (found.url, found.source) == (f"unix://{DEFAULT_SOCKET}", "the default socket")


def test_rootless_socket_when_the_default_one_is_missing(docker_config: Path, tmp_path: Path):
    if Path(DEFAULT_SOCKET).exists():
        pytest.fail(f"{DEFAULT_SOCKET} exists on this machine; this test needs it absent")
    runtime = tmp_path / "run"
    runtime.mkdir()
    (runtime / "docker.sock").touch()
    found = engine_endpoint({"XDG_RUNTIME_DIR": str(runtime)})
    assert found.url == f"unix://{runtime / 'docker.sock'}" and "rootless" in found.source


def test_a_missing_context_is_a_clear_error_in_doctor(docker_config: Path, monkeypatch, capsys):
    _use(docker_config, "gone")
    with pytest.raises(SandboxError, match="docker context 'gone'"):
        engine_endpoint({})
    monkeypatch.delenv("DOCKER_HOST", raising=False)
    monkeypatch.setenv("AGENTLS_CONFIG", str(docker_config / "none.toml"))
    code = cli_main(["sandbox", "doctor", "--json", "--backend", "docker", "--workspace", str(docker_config)])
    out = capsys.readouterr()
    report = json.loads(out.out)
    assert code == 2 and "docker context 'gone'" in report["engine"]["describe"]
    assert "docker context 'gone'" in report["why"] and "Traceback" not in out.err


@pytest.mark.docker
def test_auto_binds_the_workspace_for_the_local_engine(docker_engine, tmp_path: Path):
    """The local socket engine gets the workspace bind-mounted in auto mode (the mount's root is our own path)."""
    import asyncio

    from agent_core.sandbox.docker.run import DockerSandbox
    from agent_core.settings import SandboxSettings

    sandbox = DockerSandbox(SandboxSettings(docker_image=docker_engine))
    script = ("import os\nws = os.getcwd()\n"
              "print([l.split()[3] for l in open('/proc/self/mountinfo') if l.split()[4] == ws][0])\n")
    result = asyncio.run(sandbox.run(["python3", "-c", script], tmp_path, timeout_s=60))
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip().endswith(str(tmp_path)), result.stdout
