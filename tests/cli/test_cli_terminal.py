"""The CLI on a real terminal (a pty): colour, the coloured diff, a live bar with elapsed time and the search's
ticks; none of it under NO_COLOR (no colour) or into a pipe (no escape code at all); FORCE_COLOR colours a pipe,
--json never. The fixes are the mutant search's (no model call), in the real sandbox; across the search's hand-over
to the scripted model the progress only goes forward."""

from __future__ import annotations

import contextlib
import fcntl
import io
import os
import pty
import re
import select
import struct
import subprocess
import sys
import termios
import time
from itertools import pairwise
from pathlib import Path

import pytest

from agent_core.cli import main
from agent_core.events import ForwardProgress, PhaseEvent
from testkit.project_support import GREET, make_project, script_greet
from testkit.scripted_llm import ScriptedLLM

PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
SGR = re.compile(r"\x1b\[[0-9;]*m")  # a colour or text-style escape
ELAPSED = re.compile(r"0:00:\d\d")  # the bar's elapsed-time column
PHASE_LINE = re.compile(r"^\[ *(\d+)%\] (.*)$", re.M)  # a phase's line in a pipe


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "proj"
    root.mkdir()
    for rel, text in PROJECT.items():
        (root / rel).write_text(text)
    return root


def _env(tmp_path: Path, **extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in ("NO_COLOR", "FORCE_COLOR", "AGENTLS_BASE_URL")}
    return {**env, "AGENTLS_SEARCH": "1", "TERM": "xterm-256color", "XDG_CONFIG_HOME": str(tmp_path / "cfg"),
            **extra}


def _in_pty(argv: list[str], env: dict[str, str], timeout_s: float = 240) -> tuple[int, str]:
    """Run argv with a pty (120 columns) as its stdin, stdout and stderr; its exit code and all it wrote."""
    master, slave = pty.openpty()
    fcntl.ioctl(slave, termios.TIOCSWINSZ, struct.pack("HHHH", 40, 120, 0, 0))
    proc = subprocess.Popen(argv, stdin=slave, stdout=slave, stderr=slave, env=env)
    os.close(slave)
    chunks: list[bytes] = []
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                continue
            try:
                data = os.read(master, 65536)
            except OSError:  # EIO: the child and every copy of the pty's other end are gone
                break
            if not data:
                break
            chunks.append(data)
    finally:
        os.close(master)
        if proc.poll() is None:
            proc.kill()
    return proc.wait(timeout=30), b"".join(chunks).decode("utf-8", "replace")


def _agentls(*args: str) -> list[str]:
    return [sys.executable, "-m", "agent_core", *args]


def test_a_terminal_gets_colour_a_live_bar_with_elapsed_time_and_search_ticks(project: Path, tmp_path: Path) -> None:
    code, text = _in_pty(_agentls("fix", str(project)), _env(tmp_path))
    assert code == 0, text
    assert re.search(r"trying single-edit fixes[^\r\n]*: \d+/\d+ tried", text), "the search's ticks on the bar"
    assert ELAPSED.search(text), "the bar counts the time elapsed"
    assert "\x1b[32m+    return a + b" in text and "\x1b[31m-    return a - b" in text, "the diff in colour"
    assert "\x1b[1m--- a/calc.py" in text and "\x1b[36m@@ -1,2 +1,2 @@" in text
    assert "no model call" in text and "journal: " in text


def test_no_color_keeps_the_bar_without_colour(project: Path, tmp_path: Path) -> None:
    code, text = _in_pty(_agentls("fix", str(project)), _env(tmp_path, NO_COLOR="1"))
    assert code == 0, text
    assert not SGR.search(text), [m.group() for m in SGR.finditer(text)][:5]
    assert re.search(r"\d+/\d+ tried", text) and ELAPSED.search(text), "the bar still shows progress and time"
    assert "\r\n+    return a + b\r\n" in text


def test_a_pipe_gets_plain_lines_and_no_escape_code(project: Path, tmp_path: Path) -> None:
    done = subprocess.run(_agentls("fix", str(project)), capture_output=True, text=True, env=_env(tmp_path),
                          timeout=240)
    assert done.returncode == 0, done.stderr
    assert "\x1b" not in done.stdout + done.stderr
    assert done.stdout.endswith("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def add(a, b):\n"
                                "-    return a - b\n+    return a + b\n"), "the diff, byte for byte"
    assert re.search(r"^\[  6%\] trying single-edit fixes: \d+/\d+ tried$", done.stderr, re.M), done.stderr


def _in_process(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_force_color_colours_a_pipe_but_never_json(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("NO_COLOR", raising=False)
    monkeypatch.setenv("FORCE_COLOR", "1")
    missing = str(tmp_path / "nope")
    code, _, err = _in_process("fix", missing)
    assert code == 2 and SGR.search(err) and "is not a directory" in err
    code, out, err = _in_process("fix", missing, "--json")
    assert code == 2 and not SGR.search(out + err)
    monkeypatch.setenv("NO_COLOR", "1")  # NO_COLOR wins
    assert not SGR.search(_in_process("fix", missing)[2])


def test_test_on_a_terminal_shows_a_bar_then_the_coloured_report(project: Path, tmp_path: Path) -> None:
    code, text = _in_pty(_agentls("test", str(project)), _env(tmp_path))
    assert code == 1, text
    assert "running the tests in the sandbox" in text and ELAPSED.search(text)
    assert "\x1b[1;31mFAILED test_calc.py::test_add" in text


def test_progress_only_goes_forward_across_the_search_to_model_hand_over(tmp_path: Path) -> None:
    project = make_project(tmp_path / "greet", GREET)
    with ScriptedLLM() as llm:
        script_greet(llm)
        env = _env(tmp_path, AGENTLS_MEMORY__ENABLED="false", XDG_CACHE_HOME=str(tmp_path / "cache"))
        done = subprocess.run(_agentls("fix", str(project), "--base-url", llm.base_url), capture_output=True,
                              text=True, env=env, timeout=600)
        coder_calls = len(llm.requests_for("coder"))
    assert done.returncode == 0 and coder_calls == 1, done.stderr
    assert "unreachable" not in done.stderr and "never reached" not in done.stderr, "the probe found the model"
    steps = [(int(pct), message) for pct, message in PHASE_LINE.findall(done.stderr)]
    messages = [message for _, message in steps]
    searched = max(i for i, m in enumerate(messages) if m.startswith("trying single-edit fixes"))
    assert "planning" in messages[searched:], "the model's phases come after the search's"
    percentages = [pct for pct, _ in steps]
    assert percentages == sorted(percentages), f"progress went backwards: {steps}"
    assert all(a != b for a, b in pairwise(steps)), f"a line repeated: {steps}"


@pytest.mark.parametrize("events, shown", [
    # (percentage, message) in, (percentage, message, rose, value) out; None: not shown
    ([(3, "a"), (5, "b"), (5, "b"), (14, "c"), (8, "d"), (8, "d"), (9, "e"), (15, "f")],
     [(3, "a", True, 3.0), (5, "b", True, 5.0), None, (14, "c", True, 14.0), (14, "d", False, 14.5), None,
      (14, "e", False, 14 + 2 / 3), (15, "f", True, 15.0)]),
    ([(0, "starting"), (0, "queued"), (0, "starting")],
     [(0, "starting", True, 0.0), (0, "queued", False, 0.5), (0, "starting", False, 0 + 2 / 3)]),
])
def test_forward_progress_holds_the_percentage_and_drops_repeats(events, shown) -> None:
    forward = ForwardProgress()
    steps = [forward.step(PhaseEvent(run_id="r", phase="testing", message=m, percentage=p)) for p, m in events]
    assert [s and (s.percentage, s.message, s.rose, s.value) for s in steps] == shown
    values = [s.value for s in steps if s is not None]
    assert values == sorted(set(values)), "every value shown is higher than the one before"
