"""A remote Docker engine over TCP+TLS: agentls runs its sandbox there through DOCKER_HOST + DOCKER_TLS_VERIFY.

The engine is the machine's dockerd on a loopback port with certificates made
for the test (tests/docker/remote_engine.py), holding a copy of the sandbox
image. `agentls test` and `agentls sandbox doctor` run as a user would, in a
subprocess whose environment names only that engine. A certificate the engine
does not match, or a client the engine does not trust, gives a one-line error
and exit 2, never a traceback.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
from remote_engine import RemoteEngine

pytestmark = pytest.mark.docker


@pytest.fixture(scope="module")
def remote(docker_engine: str) -> Iterator[RemoteEngine]:
    engine = RemoteEngine()
    try:
        engine.start()
        engine.load_image(os.environ["DOCKER_HOST"], docker_engine)
        yield engine
    finally:
        engine.stop()
        assert engine.leftover_processes() == [], "the second dockerd (or its containerd) outlived the test"
        assert not engine.root.exists()


def _agentls(args: list[str], env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess[str]:
    base = {k: v for k, v in os.environ.items() if not k.startswith(("DOCKER_", "AGENTLS_", "OPENAI_"))}
    env = {**base, "AGENTLS_CONFIG": str(cwd / "no-user-config.toml"), "AGENTLS_SANDBOX__BACKEND": "docker", **env}
    return subprocess.run([sys.executable, "-m", "agent_core", *args], cwd=cwd, env=env, capture_output=True,
                          text=True, timeout=300)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (root / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\ndef test_zero():\n"
        "    assert add(0, 0) == 0\n")
    return root


def _containers_created(engine: RemoteEngine, since: float) -> list[str]:
    client = engine.client()
    try:
        events = client.events(since=int(since) - 1, until=int(time.time()) + 1, decode=True,
                               filters={"type": "container", "event": "create", "label": "agentls.run=1"})
        return [event["Actor"]["Attributes"].get("image", "") for event in events]
    finally:
        client.close()


@pytest.mark.parametrize("mode", ["auto", "copy"])
def test_a_sandboxed_test_run_goes_to_the_tls_engine(
    remote: RemoteEngine, project: Path, docker_engine: str, mode: str
):
    """auto binds the workspace (the engine is on the loopback); copy sends it by archive, as for another host."""
    started = time.time()
    env = {**remote.env(), "AGENTLS_SANDBOX__DOCKER_WORKSPACE": mode}
    done = _agentls(["test", str(project), "--json"], env, project.parent)
    assert done.returncode == 1, done.stderr[-3000:]
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["tests"]["passed"] == 1 and summary["tests"]["failed"] == 1
    assert [f["nodeid"].split("::")[-1] for f in summary["failures"]] == ["test_add"]
    assert "sandbox: docker" in done.stderr
    assert docker_engine in _containers_created(remote, started), "no agentls container was created on the engine"


def test_doctor_names_the_tcp_endpoint_and_where_it_came_from(remote: RemoteEngine, tmp_path: Path):
    done = _agentls(["sandbox", "doctor", "--json"], remote.env(), tmp_path)
    report = json.loads(done.stdout)
    assert report["engine"] == {"url": remote.host, "source": "DOCKER_HOST with DOCKER_TLS_VERIFY/DOCKER_CERT_PATH",
                                "tls": True, "describe": report["engine"]["describe"]}
    assert report["backend"] == "docker" and remote.host in report["why"]
    assert f"docker engine: {remote.host} over TLS (from DOCKER_HOST" in done.stderr
    assert done.returncode == 0, done.stderr[-3000:]


@pytest.mark.parametrize(
    "certs, expected",
    [
        ("wrong_ca", "the engine's certificate is not signed by the CA in DOCKER_CERT_PATH/ca.pem"),
        ("untrusted_client", "it does not accept the client certificate"),
    ],
)
def test_a_wrong_certificate_is_a_clear_error(remote: RemoteEngine, project: Path, certs: str, expected: str):
    done = _agentls(["test", str(project)], remote.env(remote.certs[certs]), project.parent)
    assert done.returncode == 2
    assert expected in done.stderr and remote.host in done.stderr
    assert "Traceback" not in done.stderr + done.stdout


def test_the_current_docker_context_reaches_the_tls_engine(remote: RemoteEngine, project: Path, tmp_path: Path):
    """A context made by the docker CLI itself (`docker context create` + `use`), no DOCKER_HOST: agentls follows it."""
    config = tmp_path / "docker-config"
    config.mkdir()
    good = remote.certs["good"]
    cli_env = {**os.environ, "DOCKER_CONFIG": str(config)}
    cli_env.pop("DOCKER_HOST", None)
    spec = f"host={remote.host},ca={good / 'ca.pem'},cert={good / 'cert.pem'},key={good / 'key.pem'}"
    for argv in (["context", "create", "team-host", "--docker", spec], ["context", "use", "team-host"]):
        subprocess.run(["docker", *argv], env=cli_env, check=True, capture_output=True, timeout=60)
    done = _agentls(["sandbox", "doctor", "--json"], {"DOCKER_CONFIG": str(config)}, tmp_path)
    engine = json.loads(done.stdout)["engine"]
    assert (engine["url"], engine["tls"]) == (remote.host, True)
    assert engine["source"] == f"docker context 'team-host', currentContext in {config / 'config.json'}"
    ran = _agentls(["test", str(project), "--json"], {"DOCKER_CONFIG": str(config)}, project.parent)
    assert ran.returncode == 1, ran.stderr[-3000:]
    tests = json.loads(ran.stdout.strip().splitlines()[-1])["tests"]
    assert tests == {"passed": 1, "failed": 1, "errors": 0, "skipped": 0}


async def test_copy_mode_puts_the_workspace_in_a_volume_and_brings_results_back(
    remote: RemoteEngine, docker_engine: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    """For an engine on another machine: no bind mount; the files go in by archive and what the run wrote comes back."""
    from agent_core.sandbox.docker.run import DockerSandbox
    from agent_core.settings import SandboxSettings

    for key, value in remote.env().items():
        monkeypatch.setenv(key, value)
    workspace = tmp_path / "ws"
    workspace.mkdir()
    (workspace / "given.txt").write_text("from the host")
    script = (
        "import os\n"
        "ws = os.getcwd()\n"
        "mount = [l.split() for l in open('/proc/self/mountinfo') if l.split()[4] == os.path.dirname(ws)][0]\n"
        "print('ROOT', mount[3])\n"
        "print('GIVEN', open('given.txt').read())\n"
        "open('made_inside.txt', 'w').write('from the container')\n"
    )
    sandbox = DockerSandbox(SandboxSettings(docker_image=docker_engine, docker_workspace="copy"))
    result = await sandbox.run(["python3", "-c", script], workspace, timeout_s=120)
    assert result.exit_code == 0, result.stderr
    assert "GIVEN from the host" in result.stdout
    assert "/volumes/" in result.stdout.split("ROOT", 1)[1].split()[0], result.stdout  # a volume, not our path
    assert (workspace / "made_inside.txt").read_text() == "from the container"
    assert (workspace / "made_inside.txt").stat().st_uid == os.getuid()
