"""`agentls test` end to end: a real subprocess, a real sandbox, the JSON contract and exit codes."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from sandbox_support import processes_with

PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "tests/test_calc.py": (
        "from calc import add\n\n\ndef test_add():\n    result = add(2, 3)\n    assert result == 5\n\n\n"
        "def test_zero():\n    assert add(0, 0) == 0\n"
    ),
}


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _snapshot(root: Path) -> dict[str, bytes]:
    return {str(p.relative_to(root)): p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def _agentls(*args: str, env: dict[str, str] | None = None, timeout: float = 180) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "agent_core", *args],
        capture_output=True,
        text=True,
        timeout=timeout,
        env={**os.environ, **(env or {})},
    )


def test_failing_project_json_and_untouched(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", PROJECT)
    before = _snapshot(root)
    done = _agentls("test", str(root), "--json")
    assert done.returncode == 1, done.stderr
    summary = json.loads(done.stdout.strip().splitlines()[-1])
    assert summary["status"] == "failed" and summary["tests"] == {"passed": 1, "failed": 1, "errors": 0, "skipped": 0}
    assert summary["failures"] == [
        {"nodeid": "tests/test_calc.py::test_add", "file": "tests/test_calc.py", "line": 6, "message": "assert -1 == 5"}
    ]
    assert summary["iterations"] == 0 and summary["files_changed"] == [] and summary["error"] is None
    assert summary["usage"] == {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "llm_calls": 0,
                                "cost_usd": None}
    assert _snapshot(root) == before  # PATH itself is never written


def test_passing_project_and_custom_command(tmp_path: Path) -> None:
    root = _project(tmp_path / "proj", {**PROJECT, "calc.py": "def add(a, b):\n    return a + b\n"})
    done = _agentls("test", str(root))
    assert done.returncode == 0, done.stdout + done.stderr
    assert "2 passed, 0 failed, 0 errors" in done.stdout
    custom = _agentls("test", str(root), "--test-cmd", "python -c 'raise SystemExit(1)'", "--json")
    assert custom.returncode == 1
    assert json.loads(custom.stdout.splitlines()[-1])["tests"] == {"passed": 0, "failed": 1, "errors": 0, "skipped": 0}


def test_bad_input_exits_2(tmp_path: Path) -> None:
    missing = _agentls("test", str(tmp_path / "nope"), "--json")
    assert missing.returncode == 2
    assert json.loads(missing.stdout.splitlines()[-1])["status"] == "error"
    root = _project(tmp_path / "proj", {**PROJECT, ".agentls.toml": "[sandbox]\ntimeout_s = -1\n"})
    bad = _agentls("test", str(root), "--json")
    assert bad.returncode == 2
    assert "sandbox.timeout_s" in json.loads(bad.stdout.splitlines()[-1])["error"]


def _as_from_a_terminal(argv: list[str]) -> list[str]:
    """argv started with SIGINT at its default, as Ctrl-C finds a foreground command.

    A suite started in the background (`cmd &` in a script, nohup) inherits SIGINT ignored, and
    Python keeps it ignored in its children. The reset runs in a small Python that then execs argv
    (same pid), not in a `preexec_fn`, which can deadlock a child forked from a threaded pytest.
    """
    reset = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    return [sys.executable, "-c", reset, *argv]


@pytest.mark.parametrize("signum", [signal.SIGINT, signal.SIGTERM])
def test_interrupt_kills_the_run_and_leaves_no_temp_dir(workspace: Path, token: str, signum: int) -> None:
    tmp_path = workspace  # reachable by the sandbox uid (pytest's tmp_path is mode 700)
    private_tmp = tmp_path / "tmp"
    private_tmp.mkdir()
    private_tmp.chmod(0o755)
    root = _project(
        tmp_path / "proj", {"test_slow.py": f"import time\n\n\ndef test_slow():\n    '{token}'\n    time.sleep(120)\n"}
    )
    child = subprocess.Popen(
        _as_from_a_terminal(
            [sys.executable, "-m", "agent_core", "test", str(root), "--test-cmd", f"pytest -o junit_suite_name={token}"]
        ),
        env={**os.environ, "TMPDIR": str(private_tmp)},
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    deadline = time.monotonic() + 60
    while not [p for p in processes_with(token) if p != child.pid] and time.monotonic() < deadline:
        time.sleep(0.2)
    if child.poll() is not None:
        raise AssertionError(f"agentls test ended early: {child.communicate()}")
    if not [p for p in processes_with(token) if p != child.pid]:
        child.kill()
        raise AssertionError(f"no sandboxed pytest after 60 s; agentls test said: {child.communicate()}")
    child.send_signal(signum)
    _, err = child.communicate(timeout=120)  # a hang guard: the clean-up runs slowly when the cores are busy
    assert child.returncode == 128 + signum, err
    assert processes_with(token) == []
    assert list(private_tmp.iterdir()) == []
