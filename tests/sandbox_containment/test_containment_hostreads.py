"""The host never follows what the sandbox wrote, and never hears a report the tests wrote (issue 27).

Each payload is run through the real runner on each local backend, and on a
bubblewrap sandbox that does not pass descriptors (the path Docker takes:
records in a file in the workspace): a test plants links to a host file with
a marker where the host once read results (`results.jsonl.hang`, `junit.xml`)
and appends forged report lines, then ends the process before pytest's
session ends (the host then looks for the hang dump of the unfinished
test). The report must not be a pass, and the marker must appear nowhere
in it.
"""

from __future__ import annotations

import uuid
from pathlib import Path

import pytest

from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import SandboxSettings
from agent_core.testing.runner import run_tests

PLANT_AND_EXIT = '''import glob, json, os


def test_add():
    for run_dir in glob.glob(os.path.join(os.getcwd(), ".agentls", "tests-*")):
        for name in ("results.jsonl.hang", "junit.xml"):
            path = os.path.join(run_dir, name)
            if os.path.lexists(path):
                os.remove(path)
            os.symlink({secret!r}, path)
        with open(os.path.join(run_dir, "results.jsonl"), "a") as out:
            here = os.path.join(os.getcwd(), "test_calc.py")
            for record in ({{"event": "start"}},
                           {{"event": "result", "nodeid": "test_calc.py::test_add", "path": here,
                             "outcome": "passed", "when": "call", "duration": 0.0}},
                           {{"event": "finish", "exitstatus": 0, "collected": 1, "counts": {{"passed": 1}}}}):
                out.write(json.dumps(record) + "\\n")
    os._exit(0)
'''

SHADOW_PLUGIN = '''import pytest


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    report.outcome = "passed"
    report.longrepr = None
'''


def containment_settings(backend: str) -> SandboxSettings:
    return SandboxSettings(backend=backend, timeout_s=60.0, memory_mb=512, pids=64, file_size_mb=64)


class WithoutFds:
    """A bubblewrap sandbox that does not pass descriptors: the runner falls back to a file in the workspace."""

    def __init__(self, inner) -> None:
        self.inner, self.name, self.python, self.isolated = inner, "bubblewrap-no-fds", inner.python, True

    async def run(self, argv, workspace, *, timeout_s=None, env=None):
        return await self.inner.run(argv, workspace, timeout_s=timeout_s, env=env)


@pytest.fixture(params=["bubblewrap", "process", "bubblewrap-no-fds"])
def runner_sandbox(request):
    sandbox = make_sandbox(containment_settings(request.param.removesuffix("-no-fds")))
    return WithoutFds(sandbox) if request.param.endswith("-no-fds") else sandbox


@pytest.fixture
def secret(tmp_path: Path) -> tuple[Path, str]:
    marker = f"HOST-SECRET-{uuid.uuid4().hex}"
    path = tmp_path / "host-secret.txt"
    path.write_text(f"{marker}\n" * 50)
    path.chmod(0o644)
    return path, marker


async def test_planted_links_and_a_forged_report_are_never_read(runner_sandbox, arena: Path, secret) -> None:
    path, marker = secret
    ws = arena / "ws"
    (ws / "test_calc.py").write_text(PLANT_AND_EXIT.format(secret=str(path)))

    report = await run_tests(runner_sandbox, ws, "python -m pytest", timeout_s=60, test_timeout_s=5)

    assert not report.ok, report
    assert report.passed == 0 and report.errors >= 1, report
    assert marker not in report.model_dump_json(), "the host read a file a planted link points at"
    assert not list(ws.glob(".agentls/tests-*")), "the run's folder is gone"


async def test_a_top_level_module_named_like_the_plugin_is_not_loaded(runner_sandbox, arena: Path) -> None:
    ws = arena / "ws"
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")
    (ws / "agentls_report_plugin.py").write_text(SHADOW_PLUGIN)

    report = await run_tests(runner_sandbox, ws, "python -m pytest", timeout_s=60)

    assert (report.passed, report.failed) == (0, 1), report.output
    assert report.outcomes == {"test_calc.py::test_add": "failed"}


async def test_a_bytecode_cache_left_in_the_copy_is_not_used(arena: Path) -> None:
    ws = arena / "ws"
    (ws / "calc.py").write_text("def add(a, b):\n    return a - b\n")
    (ws / "calc.pyc").write_bytes(b"not bytecode")  # a sourceless module would shadow nothing, but it goes too
    cache = ws / "__pycache__"
    cache.mkdir()
    (cache / "calc.cpython-311.pyc").write_bytes(b"forged")
    (ws / "test_calc.py").write_text("from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n")

    report = await run_tests(make_sandbox(containment_settings("bubblewrap")), ws, "python -m pytest", timeout_s=60)

    assert (report.passed, report.failed) == (0, 1), report.output
    assert not cache.exists() and not (ws / "calc.pyc").exists()
    assert not list(ws.rglob("*.pyc")), "the run wrote no bytecode"
