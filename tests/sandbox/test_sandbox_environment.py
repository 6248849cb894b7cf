"""The bubblewrap sandbox runs the project's own environment and does not change outcomes.

Real venvs (`python -m venv --without-pip`, fast and offline), real shadow
copies, the real test runner: the chosen interpreter and why, an editable
`.pth` that must import the copy, a caller's PYTHONPATH dir (how agentls adds
a plugin of its own), and a suite with 300 threads and a multiprocessing pool.
"""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.sandbox.bubblewrap import BubblewrapSandbox, probe_bwrap
from agent_core.sandbox.environment import detect_environment
from agent_core.settings import SandboxSettings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace
from testkit.project_support import THREADS_AND_POOL

pytestmark = pytest.mark.skipif(not probe_bwrap()[0], reason="bubblewrap cannot run here")



def _venv(path: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(path)], check=True, timeout=120)
    return path


def _site_packages(venv: Path) -> Path:
    return next((venv / "lib").glob("python3*/site-packages"))


def test_detection_order_setting_then_dot_venv_then_venv_then_system(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    system = detect_environment(project)
    assert system.kind == "system" and "no project environment" in system.reason
    _venv(project / "venv")
    assert detect_environment(project).python == project / "venv" / "bin" / "python"
    _venv(project / ".venv")
    chosen = detect_environment(project)
    assert (chosen.kind, chosen.python) == ("venv", project / ".venv" / "bin" / "python")
    assert chosen.interpreter.is_venv and "the project has .venv/" in chosen.describe()
    by_setting = detect_environment(project, "/usr/bin/python3")
    assert by_setting.kind == "setting" and by_setting.python == Path("/usr/bin/python3")


def test_pep582_packages_go_on_the_path(tmp_path: Path) -> None:
    lib = tmp_path / "proj" / "__pypackages__" / "3.11" / "lib"
    lib.mkdir(parents=True)
    env = detect_environment(tmp_path / "proj")
    assert env.kind == "pdm" and env.extra_pythonpath == (lib,)


async def test_an_editable_src_layout_imports_the_copy_from_its_venv(tmp_path: Path) -> None:
    """The shape of cachetools 8.0.1's sdist: src/ layout, importable only through the install."""
    project = tmp_path / "proj"
    (project / "src" / "mypkg").mkdir(parents=True)
    (project / "src" / "mypkg" / "__init__.py").write_text("VALUE = 'original'\n")
    (project / "tests").mkdir()
    (project / "tests" / "test_value.py").write_text(
        "import sys, mypkg\n\n\ndef test_value():\n    print(mypkg.__file__, sys.prefix)\n"
        "    assert mypkg.VALUE == 'copy'\n")
    venv = _venv(project / ".venv")
    (_site_packages(venv) / "__editable__.mypkg-0.1.pth").write_text(str(project / "src") + "\n")
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=60))
    with ShadowWorkspace(project) as shadow:
        (shadow.root / "src" / "mypkg" / "__init__.py").write_text("VALUE = 'copy'\n")
        report = await run_tests(sandbox, shadow.root, "pytest -s")
        assert (report.passed, report.failed, report.errors) == (1, 0, 0), report.output
        # the copy's own src/ comes first on PYTHONPATH (the copy is also shown at the project's path, where the
        # editable install points): either way the tests import the copy, with the venv's interpreter
        assert f"{shadow.root}/src/mypkg/__init__.py {venv}" in report.output
    assert (project / "src" / "mypkg" / "__init__.py").read_text() == "VALUE = 'original'\n"


async def test_python_and_pytest_resolve_to_the_environment(tmp_path: Path) -> None:
    project = tmp_path / "proj"
    project.mkdir()
    venv = _venv(project / ".venv")
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=60))
    code = "import sys, shutil, pytest; print(sys.prefix, shutil.which('pytest'), shutil.which('python'))"
    with ShadowWorkspace(project) as shadow:
        result = await sandbox.run(["python", "-c", code], shadow.root)
        via_pytest = await sandbox.run(["pytest", "--version"], shadow.root)
    assert result.exit_code == 0, result.stderr
    prefix, pytest_path, python_path = result.stdout.split()
    assert (prefix, python_path) == (str(venv), str(venv / "bin" / "python"))
    assert pytest_path == "/opt/agentls/bin/pytest"  # the venv has none: agentls' own, run by the venv's python
    assert via_pytest.exit_code == 0 and "pytest" in via_pytest.stdout + via_pytest.stderr


async def test_a_callers_pythonpath_dir_is_importable(workspace: Path, tmp_path: Path) -> None:
    """How agentls adds a plugin of its own: an absolute dir on PYTHONPATH is bound read-only."""
    plugins = tmp_path / "plugins"
    plugins.mkdir()
    (plugins / "agentls_probe_plugin.py").write_text("NAME = 'probe plugin'\n")
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=30))
    result = await sandbox.run(["python", "-c", "import agentls_probe_plugin as p; print(p.NAME)"], workspace,
                               env={"PYTHONPATH": str(plugins)})
    assert result.exit_code == 0 and "probe plugin" in result.stdout, result.stderr


async def test_300_threads_and_a_pool_pass_as_on_the_host(workspace: Path) -> None:
    (workspace / "test_threads.py").write_text(THREADS_AND_POOL)
    host = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(workspace)],
        capture_output=True, text=True, timeout=120, check=False)
    assert host.returncode == 0, host.stdout
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=120))  # default limits: 1024 MiB, 1024 processes
    report = await run_tests(sandbox, workspace, "pytest")
    assert (report.passed, report.failed, report.errors) == (3, 0, 0), report.output


SYSTEM_FILES = """\
import os
import pwd
import time


def test_the_local_time_zone_file_is_readable():
    assert os.path.isfile("/etc/localtime") and open("/etc/localtime", "rb").read(4) == b"TZif"


def test_the_user_database_answers():
    assert pwd.getpwnam("root").pw_uid == 0


def test_local_time_works():
    assert time.localtime().tm_year > 2000
"""


async def test_the_system_files_a_suite_reads_are_readable_as_on_the_host(workspace: Path) -> None:
    """/etc/localtime (python-dateutil's tz tests read it), /etc/passwd: bound into a readable /etc."""
    (workspace / "test_system.py").write_text(SYSTEM_FILES)
    host = await asyncio.to_thread(
        subprocess.run, [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", str(workspace)],
        capture_output=True, text=True, timeout=120, check=False)
    assert host.returncode == 0, host.stdout
    report = await run_tests(BubblewrapSandbox(SandboxSettings(timeout_s=120)), workspace, "pytest")
    assert (report.passed, report.failed, report.errors) == (3, 0, 0), report.output


async def test_concurrent_runs_count_their_processes_apart(workspace: Path) -> None:
    """Each run has a uid of its own, so RLIMIT_NPROC is per run: two runs of 30 threads under a limit of 40."""
    sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=60, pids=40))
    code = ("import os, threading, time, json\nev = threading.Event()\n"
            "ts = [threading.Thread(target=ev.wait) for _ in range(30)]\n[t.start() for t in ts]\n"
            "time.sleep(2)\nev.set()\n[t.join() for t in ts]\nprint(json.dumps(os.getuid()))\n")
    first, second = await asyncio.gather(*(sandbox.run(["python3", "-c", code], workspace) for _ in range(2)))
    assert first.exit_code == 0 and second.exit_code == 0, first.stderr + second.stderr
    import os

    if os.geteuid() == 0:
        assert json.loads(first.stdout) != json.loads(second.stdout)
