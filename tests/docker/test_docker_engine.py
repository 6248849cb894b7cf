"""The Docker backend against a real engine: limits, cleanup in every outcome, discovery, image build, doctor."""

from __future__ import annotations

import asyncio
import os
import subprocess
import sys
import time

import pytest

from agent_core.cli import main as cli_main
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.sandbox.docker import build, engine, sweep
from agent_core.sandbox.docker.run import DockerSandbox
from agent_core.settings import SandboxSettings
from agent_core.testing.runner import run_tests
from testkit.project_support import THREADS_AND_POOL

pytestmark = pytest.mark.docker


def labelled_containers(owner: int | str | None = None) -> list[str]:
    """agentls containers started by `owner` (default: this process; other users of the engine are ignored)."""
    owner = os.getpid() if owner is None else owner
    labels = ["agentls.run=1", f"agentls.owner_pid={owner}"]
    client = engine.connect()
    try:
        return [c.name for c in client.containers.list(all=True, filters={"label": labels}, ignore_removed=True)]
    finally:
        client.close()


@pytest.fixture
def workspace():
    root = make_temp_dir("dockertest")
    yield root
    remove_temp_dir(root)


@pytest.fixture
def sandbox(docker_engine):
    return DockerSandbox(SandboxSettings(docker_image=docker_engine, memory_mb=256, pids=64, file_size_mb=16))


async def test_runs_in_the_workspace_and_restores_ownership(sandbox, workspace):
    owner = workspace.stat().st_uid
    result = await sandbox.run(
        [sandbox.python, "-c", "import os; open('out.txt', 'w').write(os.getcwd()); print(os.getuid())"], workspace
    )
    assert result.exit_code == 0, result.stderr
    assert result.stdout.strip() == ("65534" if os.geteuid() == 0 else str(os.getuid()))
    assert (workspace / "out.txt").read_text() == str(workspace)
    assert (workspace / "out.txt").stat().st_uid == owner and workspace.stat().st_uid == owner
    assert labelled_containers() == []


async def test_runner_reports_a_failing_test_with_its_real_path(sandbox, workspace):
    (workspace / "test_a.py").write_text("def test_ok():\n    pass\n\ndef test_bad():\n    assert __file__ == ''\n")
    report = await run_tests(sandbox, workspace, "pytest")
    assert (report.passed, report.failed) == (1, 1)
    assert report.failures[0].file.endswith("test_a.py") and report.failures[0].line == 5
    assert str(workspace / "test_a.py") in report.failures[0].message + report.failures[0].traceback


async def test_the_plugin_reports_through_a_wrapper_and_cuts_a_hang_at_its_line(sandbox, workspace):
    (workspace / "loop.py").write_text("def spin(n):\n    while n:\n        n += 1\n    return n\n")
    (workspace / "test_loop.py").write_text(
        "from loop import spin\n\n\ndef test_spin():\n    assert spin(1) == 0\n\n\ndef test_ok():\n    pass\n")
    report = await run_tests(sandbox, workspace, "timeout 100 python3 -m pytest", timeout_s=120, test_timeout_s=2)
    assert not report.timed_out and (report.passed, report.failed) == (1, 1), report.output
    assert report.slowest_pass_s is not None, "per-test results came from the plugin"
    [failure] = report.failures
    assert (failure.nodeid, failure.line) == ("test_loop.py::test_spin", 5)
    assert failure.source_file == "loop.py" and failure.source_line in (2, 3)
    assert labelled_containers() == []


async def test_timeout_kills_and_removes(sandbox, workspace):
    started = time.monotonic()
    result = await sandbox.run([sandbox.python, "-c", "while True: pass"], workspace, timeout_s=1.5)
    assert result.timed_out and result.exit_code is None
    assert time.monotonic() - started < 15
    assert labelled_containers() == []


async def test_cancel_removes_the_container(sandbox, workspace):
    task = asyncio.create_task(sandbox.run([sandbox.python, "-c", "import time; time.sleep(60)"], workspace))
    for _ in range(100):
        await asyncio.sleep(0.1)
        if labelled_containers():
            break
    assert labelled_containers(), "the container never appeared"
    task.cancel()
    with pytest.raises(asyncio.CancelledError):
        await task
    assert labelled_containers() == []


async def test_memory_limit_reports_oom(sandbox, workspace):
    result = await sandbox.run([sandbox.python, "-c", "b = bytearray(600 * 1024 * 1024)"], workspace, timeout_s=30)
    assert result.exit_code != 0 and result.limit_hit == "memory"


async def test_file_size_limit(sandbox, workspace):
    code = "f = open('big', 'wb')\nfor _ in range(64): f.write(b'0' * 1048576)\n"
    result = await sandbox.run([sandbox.python, "-c", code], workspace, timeout_s=30)
    assert result.exit_code != 0 and result.limit_hit == "file_size"
    assert (workspace / "big").stat().st_size <= 16 * 1024 * 1024


def test_discovery_names_a_missing_image(docker_engine):
    ok, reason = engine.docker_available(SandboxSettings(docker_image=docker_engine))
    assert ok, reason
    ok, reason = engine.docker_available(SandboxSettings(docker_image="agentls/missing:none"))
    assert not ok and "agentls/missing:none" in reason and "build-image" in reason


def test_leftover_containers_of_dead_owners_are_removed(docker_engine):
    client = engine.connect()
    try:
        client.containers.create(docker_engine, ["true"], labels={
            "agentls.run": "1", "agentls.owner_pid": "999999999", "agentls.host": "elsewhere"})
    finally:
        client.close()
    assert len(labelled_containers(999999999)) == 1
    removed = sweep.remove_leftover_containers()
    assert len(removed) >= 1 and labelled_containers(999999999) == []


def test_build_image_puts_requirements_in_a_cached_layer(docker_engine, tmp_path, capsys):
    req = tmp_path / "requirements.txt"
    req.write_text("iniconfig\n")
    tag = "agentls/sandbox-test:req"
    argv = ["sandbox", "build-image", "--base", "agentls/base:local", "--tag", tag, "--requirements", str(req)]
    assert cli_main(argv) == 0
    assert cli_main(argv) == 0  # second build: every layer from the cache
    err = capsys.readouterr().err
    assert err.count("Using cache") >= 4
    code, out = build.probe_image(tag, ["python3", "-c", "import iniconfig, pytest, hypothesis, coverage"])
    assert code == 0, out


def test_build_image_refuses_a_base_that_is_not_local(docker_engine, capsys):
    assert cli_main(["sandbox", "build-image", "--base", "agentls/nowhere:1", "--tag", "agentls/x:1"]) == 2
    assert "will not be pulled" in capsys.readouterr().err


def test_doctor_on_docker_reports_every_limit_held(docker_engine, capsys, tmp_path):
    (tmp_path / ".agentls.toml").write_text(
        f'[sandbox]\ndocker_image = "{docker_engine}"\nmemory_mb = 256\npids = 64\n'
    )
    assert cli_main(["sandbox", "doctor", "--backend", "docker", "--workspace", str(tmp_path)]) == 0
    out = capsys.readouterr().out
    assert "backend: docker" in out and "all limits hold" in out
    for limit in ("no network", "writes only in workspace", "memory limit", "process limit", "timeout kill"):
        assert any(line.startswith(limit) and " yes " in line for line in out.splitlines()), out


def test_crashed_owner_leaves_a_container_that_startup_cleanup_removes(docker_engine, workspace):
    """SIGKILL of the owning process: nothing can clean up in-process, the next start's sweep does."""
    script = (
        "import asyncio, sys\n"
        "from pathlib import Path\n"
        "from agent_core.sandbox.docker.run import DockerSandbox\n"
        "from agent_core.settings import SandboxSettings\n"
        f"sb = DockerSandbox(SandboxSettings(docker_image={docker_engine!r}))\n"
        f"asyncio.run(sb.run([sb.python, '-c', 'import time; time.sleep(120)'], Path({str(workspace)!r})))\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", script])
    try:
        for _ in range(200):
            if labelled_containers(proc.pid):
                break
            time.sleep(0.1)
        assert labelled_containers(proc.pid), "the crashing run never started its container"
    finally:
        proc.kill()
        proc.wait()
    assert len(labelled_containers(proc.pid)) == 1
    assert sweep.remove_leftover_containers() and labelled_containers(proc.pid) == []


async def test_300_threads_and_a_pool_pass_under_the_default_limits(docker_engine, workspace):
    """The sandbox does not change outcomes: thread pools, multiprocessing and /dev/shm work in a container."""
    (workspace / "test_threads.py").write_text(THREADS_AND_POOL)
    sandbox = DockerSandbox(SandboxSettings(docker_image=docker_engine, timeout_s=120))  # 1024 MiB, 1024 processes
    report = await run_tests(sandbox, workspace, "pytest")
    assert (report.passed, report.failed, report.errors) == (3, 0, 0), report.output


DEPS_PROJECT = {
    "pyproject.toml": '[project]\nname = "greetpkg"\nversion = "0.1"\ndependencies = ["six"]\n',
    "src/greetpkg/__init__.py": "import six\n\n\ndef greet(name):\n    return six.text_type('Hello, ') + name + '?'\n",
    "tests/test_greet.py": (
        "import six\nfrom greetpkg import greet\n\n\ndef test_greet():\n    assert greet('Ann') == 'Hello, Ann!'\n\n\n"
        "def test_six_comes_from_the_image():\n    assert six.__file__.startswith('/usr/')\n"
    ),
}


def test_a_projects_dependencies_become_a_cached_layer_its_runs_use(
    docker_engine, tmp_path, capsys, scripted_llm, monkeypatch
):
    """build-image --project: six (from PyPI, on the host) in a layer tagged by the dependency files' hash;
    `agentls fix` on Docker then imports the src/ layout's copy and six from that layer, and fixes the test."""
    import contextlib
    import io
    import json

    from agent_core.sandbox.project_image import project_image_tag
    from testkit.project_support import make_project

    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    monkeypatch.setenv("AGENTLS_API_KEY", "sk-test-SECRET-0123456789")
    project = make_project(
        tmp_path / "greet",
        {
            **DEPS_PROJECT,
            ".agentls.toml": f'[sandbox]\nbackend = "docker"\ndocker_image = "{docker_engine}"\ntimeout_s = 120\n',
        },
    )
    assert cli_main(["sandbox", "build-image", "--project", str(project), "--tag", docker_engine]) == 0
    tag = project_image_tag(docker_engine, project)
    assert tag.startswith(docker_engine + "-deps-") and f"built {tag}" in capsys.readouterr().out
    assert engine.image_exists(tag)

    scripted_llm.add("coder", {"edits": [{"path": "src/greetpkg/__init__.py", "search": "+ name + '?'",
                                          "replace": "+ name + '!'"}], "explanation": "an exclamation mark"})
    scripted_llm.add("explainer", "greet ended with '?'; it now ends with '!'.")
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = cli_main(["fix", str(project), "--base-url", scripted_llm.base_url, "--json"])
    result = json.loads(out.getvalue().strip().splitlines()[-1])
    assert code == 0 and result["status"] == "fixed", err.getvalue()
    assert result["tests"] == {"passed": 2, "failed": 0, "errors": 0, "skipped": 0}

    (project / "pyproject.toml").write_text(DEPS_PROJECT["pyproject.toml"].replace('["six"]', '["six>=1.10"]'))
    assert project_image_tag(docker_engine, project) != tag  # a changed dependency file is a new layer
