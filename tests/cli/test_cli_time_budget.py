"""`time_budget_s` ends a fix run on its own, with its best attempt: a model that answers too slowly, or a test
run still going at the deadline, is cut there; the run reports status budget_spent (exit 1), the best attempt
so far (in its summary and journal) and the time budget as the reason; nothing of the run is left (no shadow
copy, no process). Under a time budget the search gets a share of what is left, not its whole budget_s.

Each run is a real `agentls fix` subprocess (its own TMPDIR, so a left-behind copy shows) with the real
sandbox, against the scripted OpenAI-compatible server.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
import uuid
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from testkit.scripted_llm import Fault, ScriptedLLM

REPO = Path(__file__).resolve().parents[2]
PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a + b\n",
    "test_calc.py": "from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                    "def test_mul():\n    assert mul(2, 3) == 6\n",
}
HALF = {"edits": [{"path": "calc.py", "search": "return a - b", "replace": "return a + b"}],
        "explanation": "add subtracted"}  # fixes test_add only: the best attempt so far
LOOP = {"edits": [{"path": "calc.py", "search": "def mul(a, b):\n    return a + b",
                   "replace": "def mul(a, b):\n    while True:\n        pass"}],
        "explanation": "a mul that never returns: its test run is still going at the deadline"}
REFLECTION = {"hypothesis": "mul adds", "confidence": 0.5}
BUDGET_S = 12.0  # the baseline and a round take ~2.5 s each on an idle machine; with 7 s, a load average of 4 (a
# benchmark beside the suite) made them outlast it, and the second round never started; the second round outlasts it
MARGIN_S = 3.0  # what ending cleanly may take past the deadline: cancelling, the journal, removing the copy


@pytest.fixture
def base() -> Iterator[Path]:
    """A temp dir the sandbox uid can reach, with a private TMPDIR inside."""
    path = make_temp_dir("timebudget")
    path.chmod(0o755)
    (path / "tmp").mkdir(mode=0o755)
    try:
        yield path
    finally:
        remove_temp_dir(path)


def _project(root: Path) -> Path:
    root.mkdir()
    for rel, text in PROJECT.items():
        (root / rel).write_text(text)
    return root


def _fix(base: Path, project: Path, llm: ScriptedLLM, *settings: str) -> tuple[int, dict, str]:
    env = {**os.environ, "TMPDIR": str(base / "tmp"), "XDG_CACHE_HOME": str(base / "cache"),
           "XDG_CONFIG_HOME": str(base / "config"), "PYTHONPATH": f"{REPO}:{REPO / 'tests'}"}
    for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "AGENTLS_TOKEN_BUDGET", "DOCKER_HOST"):
        env.pop(name, None)
    argv = [sys.executable, "-m", "agent_core", "fix", str(project), "--json", "--base-url", llm.base_url,
            "--set", "samples=1", *[arg for s in settings for arg in ("--set", s)]]
    done = subprocess.run(argv, env=env, cwd=base, capture_output=True, text=True, timeout=120)
    assert "Traceback" not in done.stderr, done.stderr
    return done.returncode, json.loads(done.stdout.strip().splitlines()[-1]), done.stderr


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


def _journal(project: Path, run_id: str) -> list[dict]:
    path = project / ".agentls" / "runs" / run_id / "journal.jsonl"
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.mark.parametrize("cut", ["model", "tests"])
def test_time_budget_ends_the_run_with_its_best_attempt(base: Path, cut: str) -> None:
    """`model`: the second coder call hangs past the deadline; `tests`: its edit hangs the test run instead."""
    project = _project(base / "proj")
    token = f"agentls-budget-{uuid.uuid4().hex}"
    with ScriptedLLM() as llm:
        llm.add("coder", HALF)
        llm.add("coder", Fault.hang(120, then=LOOP) if cut == "model" else LOOP)
        llm.default("reflector", REFLECTION)
        started = time.monotonic()
        code, summary, err = _fix(base, project, llm, f"time_budget_s={BUDGET_S}", "sandbox.test_timeout_s=100",
                                  f'test_command="pytest -o junit_suite_name={token}"')
        wall = time.monotonic() - started
        coder_calls = len(llm.requests_for("coder"))
    assert (code, summary["status"]) == (1, "budget_spent"), err
    assert summary["error"] == f"the time budget is spent: {BUDGET_S:g} s (time_budget_s)"
    assert "token budget" not in err and "time budget is spent" in err
    assert summary["duration_s"] <= BUDGET_S + MARGIN_S, summary["duration_s"]
    assert wall < BUDGET_S + MARGIN_S + 30, "the run ended on its own (30 s: the interpreter's start on a busy CPU)"
    assert coder_calls == 2, "the deadline came during the second round"
    records = _journal(project, summary["run_id"])
    ended = [r for r in records if r["type"] == "time_budget_spent"]
    assert [r["node"] for r in ended] == ["code" if cut == "model" else "test"]
    assert records[-1]["type"] == "run_end" and records[-1]["status"] == "budget_spent"
    # The best attempt is the first round's (test_add fixed), never the second round's hang.
    result = json.loads((project / ".agentls" / "runs" / summary["run_id"] / "summary.json").read_text())
    best = result["best_attempt"]
    assert best is not None and [c["path"] for c in best["changes"]] == ["calc.py"]
    assert [e["new_text"] for e in best["changes"][0]["edits"]] == ["    return a + b\n"], "add's fix, not mul's loop"
    assert (result["best_report"]["passed"], result["best_report"]["failed"]) == (1, 1)
    assert (project / "calc.py").read_text() == PROJECT["calc.py"], "no --apply: the workspace is untouched"
    assert list((base / "tmp").iterdir()) == [], "the shadow copy (or another temp dir) was left behind"
    assert _processes_with(token) == [], "a sandboxed test process outlived the run"


def test_the_search_gets_a_share_of_the_time_left(base: Path) -> None:
    project = _project(base / "proj")
    (project / "calc.py").write_text(PROJECT["calc.py"].replace("return a + b", "return a * b"))  # add's bug only
    with ScriptedLLM() as llm:
        llm.default("*", Fault.status(500))  # the search alone must fix it: no model answers
        code, summary, err = _fix(base, project, llm, "search.enabled=true", "search.budget_s=120",
                                  "time_budget_s=60")
    assert (code, summary["status"]) == (0, "fixed"), err
    localized = [r for r in _journal(project, summary["run_id"]) if r["type"] == "localize"]
    assert len(localized) == 1
    # At most half of what was left when the search started (less than 60 s), not search.budget_s (120 s).
    assert 20 < localized[0]["budget_s"] <= 30, localized[0]


def test_a_slow_suite_gives_the_search_more_time(base: Path) -> None:
    """Without a time budget the search gets search.budget_s plus twice the baseline's time: localizing and a
    candidate's verification are each a run of the whole suite, which a slow suite makes long."""
    project = _project(base / "proj")
    (project / "calc.py").write_text(PROJECT["calc.py"].replace("return a + b", "return a * b"))  # add's bug only
    (project / "test_slow.py").write_text("import time\n\n\ndef test_slow():\n    time.sleep(3)\n")
    with ScriptedLLM() as llm:
        llm.default("*", Fault.status(500))  # the search alone must fix it: no model answers
        code, summary, err = _fix(base, project, llm, "search.enabled=true", "search.budget_s=20")
    assert (code, summary["status"]) == (0, "fixed"), err
    records = _journal(project, summary["run_id"])
    baseline = next(r["report"] for r in records if r["type"] == "test_report")
    localized = [r for r in records if r["type"] == "localize"]
    assert baseline["duration_s"] >= 3 and len(localized) == 1
    assert localized[0]["budget_s"] == pytest.approx(20 + 2 * baseline["duration_s"], abs=0.01), localized[0]
