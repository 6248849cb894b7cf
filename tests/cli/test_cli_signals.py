"""SIGTERM (what `kill` and CI timeouts send) stops every long command the way Ctrl-C does.

Each command runs as a real subprocess against the scripted endpoint, which
holds the model call (or, for `agentls test`, a slow test holds the run); the
test sends SIGTERM mid-run and checks the `--json` line, the exit code
(128 + 15) and that nothing is left: no shadow copy in TMPDIR, no `run.lock`,
no checkpoint WAL/SHM, no process.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from scripted_llm import Fault, ScriptedLLM

CALC = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
SLOW = {"test_slow.py": "import time\n\n\ndef test_slow():\n    time.sleep(120)\n"}
REPO = Path(__file__).resolve().parents[2]


@pytest.fixture
def base() -> Iterator[Path]:
    """A temp dir the sandbox uid can reach, with a private TMPDIR inside."""
    path = make_temp_dir("sigtest")
    path.chmod(0o755)
    (path / "tmp").mkdir(mode=0o755)
    try:
        yield path
    finally:
        remove_temp_dir(path)


def _project(root: Path, files: dict[str, str]) -> Path:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text)
    return root


def _start(base: Path, argv: list[str]) -> subprocess.Popen:
    """`agentls ARGV` with SIGINT at its default (a suite run in the background inherits it ignored)."""
    reset = "import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_DFL); os.execv(sys.argv[1], sys.argv[1:])"
    env = {**os.environ, "TMPDIR": str(base / "tmp"), "XDG_CACHE_HOME": str(base / "cache"),
           "AGENTLS_API_KEY": "sk-test-SECRET-0123456789", "PYTHONPATH": f"{REPO}:{REPO / 'tests'}"}
    for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "DOCKER_HOST"):
        env.pop(name, None)
    return subprocess.Popen([sys.executable, "-c", reset, sys.executable, "-m", "agent_core", *argv], env=env, cwd=base,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)


def _wait_for(child: subprocess.Popen, ready, what: str, guard_s: float = 120) -> None:
    deadline = time.monotonic() + guard_s  # a hang guard, not a measurement
    while not ready():
        if child.poll() is not None or time.monotonic() > deadline:
            child.kill()
            out, err = child.communicate()
            raise AssertionError(f"{what} never happened; the command said: {out}\n{err}")
        time.sleep(0.1)


def _terminate(child: subprocess.Popen, signum: int = signal.SIGTERM) -> tuple[dict, str]:
    child.send_signal(signum)
    out, err = child.communicate(timeout=120)
    assert child.returncode == 128 + signum, err
    assert "Traceback" not in err, err
    assert f"interrupted ({signal.Signals(signum).name})" in err
    return json.loads(out.strip().splitlines()[-1]), err


def _processes_with(token: str) -> list[int]:
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found


def _assert_nothing_left(base: Path, project: Path, token: str) -> None:
    assert list((base / "tmp").iterdir()) == [], "the shadow copy (or another temp dir) was left behind"
    agentls = project / ".agentls"
    leftovers = [p.name for p in agentls.rglob("*") if p.name == "run.lock" or p.name.endswith(("-wal", "-shm"))]
    assert leftovers == []
    assert _processes_with(token) == [], "a process of the run outlived it"


@pytest.mark.parametrize("command", [
    ["fix", "{project}", "--json"],
    ["run", "add a sub(a, b) function to calc.py", "{project}", "--json"],
])
def test_sigterm_stops_a_run_waiting_on_the_model(base: Path, command: list[str]) -> None:
    project = _project(base / "proj", CALC)
    token = f"agentls-sig-{uuid.uuid4().hex}"
    with ScriptedLLM() as llm:
        llm.default("*", Fault.hang(300))
        child = _start(base, [a.format(project=project) for a in command]
                       + ["--base-url", llm.base_url, "--test-cmd", f"pytest -o junit_suite_name={token}"])
        _wait_for(child, lambda: llm.requests, "a model request")
        summary, _ = _terminate(child)
    assert summary["status"] == "error" and summary["error"] == "interrupted (SIGTERM)"
    assert summary["run_id"], "the interrupted run is named, so its journal can be found"
    records = (project / ".agentls" / "runs" / summary["run_id"] / "journal.jsonl").read_text().splitlines()
    assert json.loads(records[-1])["type"] == "run_end" and json.loads(records[-1])["status"] == "cancelled"
    _assert_nothing_left(base, project, token)


def test_sigint_prints_the_json_line_too(base: Path) -> None:
    project = _project(base / "proj", CALC)
    with ScriptedLLM() as llm:
        llm.default("*", Fault.hang(300))
        child = _start(base, ["fix", str(project), "--json", "--base-url", llm.base_url])
        _wait_for(child, lambda: llm.requests, "a model request")
        summary, _ = _terminate(child, signal.SIGINT)
    assert summary["status"] == "error" and summary["error"] == "interrupted (SIGINT)"
    _assert_nothing_left(base, project, str(project / "calc.py"))


def test_sigterm_stops_gen_tests(base: Path) -> None:
    project = _project(base / "proj", {**CALC, "pyproject.toml": "[project]\nname = 'calc'\n"})
    with ScriptedLLM() as llm:
        llm.default("*", Fault.hang(300))
        child = _start(base, ["gen-tests", str(project / "calc.py"), "--json", "--base-url", llm.base_url])
        _wait_for(child, lambda: llm.requests, "a model request")
        summary, _ = _terminate(child)
    assert summary["status"] == "error" and summary["error"] == "interrupted (SIGTERM)"
    _assert_nothing_left(base, project, str(project))


def test_sigterm_stops_test(base: Path) -> None:
    project = _project(base / "proj", SLOW)
    token = f"agentls-sig-{uuid.uuid4().hex}"
    child = _start(base, ["test", str(project), "--json", "--test-cmd", f"pytest -o junit_suite_name={token}"])
    _wait_for(child, lambda: [p for p in _processes_with(token) if p != child.pid], "the slow test")
    summary, _ = _terminate(child)
    assert summary["status"] == "error" and summary["error"] == "interrupted (SIGTERM)"
    _assert_nothing_left(base, project, token)


def test_every_command_sweeps_copies_of_dead_owners(base: Path) -> None:
    stale = base / "tmp" / "agentls-shadow-stale"
    (stale / "proj").mkdir(parents=True)
    (stale / ".agentls-owner").write_text("1999999999 0\n")  # no such pid: its owner is gone
    live = make_temp_dir("shadow", parent=base / "tmp")  # owned by this (live) process
    child = _start(base, ["runs", "--workspace", str(base)])
    child.communicate(timeout=60)
    assert child.returncode == 0
    assert not stale.exists() and live.exists()


def test_an_interrupted_run_counts_the_model_calls_it_made(base: Path) -> None:
    """A slow coder answer (a wrong edit), then the reflector's call held: SIGTERM during the second call. The
    `--json` usage counts both calls (the second cut short), and so does the journal's `run_end`."""
    project = _project(base / "proj", CALC)
    wrong = {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return a * b"}],
             "explanation": "try multiplying"}
    with ScriptedLLM() as llm:
        llm.add("coder", Fault.hang(1, then=wrong))
        llm.default("*", Fault.hang(300))
        child = _start(base, ["fix", str(project), "--json", "--base-url", llm.base_url])
        _wait_for(child, lambda: len(llm.requests) >= 2, "a second model request", 600)  # two sandboxed runs before
        summary, _ = _terminate(child)
    assert [r["role"] for r in llm.requests] == ["coder", "reflector"]
    assert summary["status"] == "error" and summary["error"] == "interrupted (SIGTERM)"
    assert summary["usage"]["llm_calls"] == 2 and summary["usage"]["prompt_tokens"] > 0, summary["usage"]
    records = (project / ".agentls" / "runs" / summary["run_id"] / "journal.jsonl").read_text().splitlines()
    end = json.loads(records[-1])
    assert end["type"] == "run_end" and end["usage"]["llm_calls"] == 2
