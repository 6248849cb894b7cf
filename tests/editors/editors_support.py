"""Helpers of the headless editor tests (Neovim, Emacs); fixtures are in conftest.py.

`editor_workspace` is a small project with a bug (`calc.add` subtracts) and a
test that catches it; `script_fix(llm)` queues the scripted model's planner,
coder and reflector answers that fix it. `run_editor(argv, env, timeout)`
runs a real editor process with the project's venv first on PATH (so the
snippets' plain `python3 -m lsp_server` finds agentls) and reports its output;
`server_tmp` is the server's TMPDIR (shadow copies), so a test can check
that nothing is left in it; `server_processes(root)` lists language servers still running for a
workspace, so a test can prove none is left behind. `drive_fix` runs an
editor's driver through "Plan and fix" and `check_fixed_in_buffer_only` holds
what every editor must show afterwards.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SNIPPETS = REPO / "editor_client"
HERE = Path(__file__).resolve().parent

CALC = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
FIXED_CALC = CALC.replace("a - b", "a + b")
TEST_CALC = "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"

PLAN = {
    "approach": "Fix add.",
    "subtasks": [{"id": "t1", "description": "make add add in calc.py", "files": ["calc.py"]}],
}
FIX = {
    "edits": [{"path": "calc.py", "search": "    return a - b\n", "replace": "    return a + b\n"}],
    "explanation": "add must add",
}
REFLECTION = {"hypothesis": "add subtracts", "file": "calc.py", "change": "use +", "confidence": "high"}
MODEL = "scripted-editor-model"


def script_fix(llm) -> None:
    """Planner, coder and reflector answers that turn `a - b` into `a + b`."""
    llm.default("planner", PLAN)
    llm.default("coder", FIX)
    llm.default("reflector", REFLECTION)


@dataclass
class EditorRun:
    returncode: int
    stdout: str
    stderr: str

    def describe(self) -> str:
        return (
            f"exit code {self.returncode}\n--- stdout ---\n{self.stdout[-4000:]}\n--- stderr ---\n{self.stderr[-4000:]}"
        )


def editor_env(tmp_path: Path, server_tmp: Path, **extra: str) -> dict[str, str]:
    """The environment of the editor: venv first on PATH, its own TMPDIR and HOME, no stray endpoints."""
    home = tmp_path / "home"
    home.mkdir(exist_ok=True)
    env = {**os.environ, "TMPDIR": str(server_tmp), "HOME": str(home), **extra}
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env.get('PATH', '')}"
    for key in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "PYTHONPATH"):
        env.pop(key, None)
    return env


def require_editor(name: str, install: str) -> str:
    path = shutil.which(name)
    assert path, f"{name} is not installed: {install}"
    return path


def run_editor(argv: list[str], cwd: Path, env: dict[str, str], timeout: float = 240) -> EditorRun:
    """Run a headless editor to completion (killed with its process group on timeout)."""
    proc = subprocess.Popen(
        argv,
        cwd=cwd,
        env=env,
        stdin=subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
    )
    try:
        stdout, stderr = proc.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(proc.pid, 9)
        stdout, stderr = proc.communicate()
        pytest.fail(f"{argv[0]} did not finish in {timeout} s\n{stdout[-4000:]}\n{stderr[-4000:]}")
    return EditorRun(proc.returncode, stdout, stderr)


def drive_fix(
    argv: list[str], workspace: Path, scripted_llm, tmp_path: Path, server_tmp: Path, **snippet_env: str
) -> tuple[dict, EditorRun]:
    """Run an editor driver through "Plan and fix" against the scripted model; what it saw, and its run.

    The driver writes what it saw as JSON to $AGENTLS_E2E_OUT; an `error` key there is its own failure.
    """
    script_fix(scripted_llm)
    out = tmp_path / "editor-result.json"
    env = editor_env(
        tmp_path,
        server_tmp,
        AGENTLS_E2E_OUT=str(out),
        E2E_AGENTLS_BASE_URL=scripted_llm.base_url,
        E2E_AGENTLS_MODEL=MODEL,
        **snippet_env,
    )
    run = run_editor(argv, cwd=workspace, env=env)
    assert out.is_file(), f"the driver wrote no result\n{run.describe()}"
    seen = json.loads(out.read_text())
    assert "error" not in seen, f"{seen['error']}\n{run.describe()}"
    return seen, run


def check_fixed_in_buffer_only(
    seen: dict, buffer: str, run: EditorRun, workspace: Path, scripted_llm, server_tmp: Path
) -> None:
    """What both editors must show after "Plan and fix": actions offered, the fix in the unsaved buffer
    (not on disk), the editor's settings used, the trace, one "fixed" message, nothing left running."""
    assert "Plan and fix" in seen["titles"] and "Generate tests" in seen["titles"]
    assert seen["edit_applied"], f"the buffer never changed: {buffer!r}, {seen['messages']}\n{run.describe()}"
    questions = [q for q in seen.get("questions") or [] if q.endswith("Apply the change to calc.py?")]
    assert len(questions) == 1, f"the preview question (no changeAnnotationSupport): {seen.get('questions')}"
    assert buffer == FIXED_CALC
    assert seen["modified"] is True
    assert (workspace / "calc.py").read_text() == CALC, "the server wrote the file behind the editor's back"
    models = {r.get("model") for r in scripted_llm.requests}
    assert "coder" in {r["role"] for r in scripted_llm.requests} and models == {MODEL}, (
        "settings did not reach the engine"
    )
    assert seen.get("trace", "").startswith("# Run ") and "+    return a + b" in seen["trace"], seen.get("trace")
    assert len(seen["messages"]) == 1 and "): fixed" in seen["messages"][0], seen["messages"]
    assert run.returncode == 0, run.describe()
    assert leftovers(workspace, server_tmp) == ([], []), (
        "the language server outlived the editor, or the run left temporary files behind"
    )


HINT = "the bug is the undefined name on the return line of add"


def check_hint_and_report(seen: dict, scripted_llm) -> None:
    """A driver run with $E2E_AGENTLS_HINT: the editor asked the hint, the coder's prompt carries it, and
    :AgentlsShowReport (or the Emacs command) handed the run's HTML report to the opener."""
    assert seen.get("hint_prompt", "").startswith("agentls hint"), seen.get("hint_prompt")
    prompts = [str(m.get("content")) for r in scripted_llm.requests_for("coder") for m in r.get("messages", [])]
    assert any(f"The user's hint: {HINT}" in p for p in prompts), "the hint never reached the coder"
    assert f"hint: {HINT}" in seen["trace"]
    report = Path(str(seen.get("report_path", "")).removeprefix("file://"))
    assert report.name == "report.html" and report.is_file(), (seen.get("report_path"), seen.get("notes"))
    assert 'id="graph"' in report.read_text(encoding="utf-8")


def leftovers(root: Path, server_tmp: Path, grace_s: float = 5.0) -> tuple[list[int], list[str]]:
    """Server processes and temporary files still there `grace_s` after the editor exited (polled gently)."""
    deadline = time.monotonic() + grace_s
    while True:
        procs, files = server_processes(root), sorted(p.name for p in server_tmp.iterdir())
        if (not procs and not files) or time.monotonic() > deadline:
            return procs, files
        time.sleep(0.1)


def server_processes(root: Path) -> list[int]:
    """Pids of `-m lsp_server` and `agentls serve` processes whose working directory is `root`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            cmdline = (entry / "cmdline").read_bytes().split(b"\0")
            cwd = os.readlink(entry / "cwd")
        except OSError:
            continue
        serves = b"lsp_server" in cmdline or (b"serve" in cmdline and any(a.endswith(b"agentls") for a in cmdline))
        if serves and Path(cwd) == root:
            found.append(int(entry.name))
    return found
