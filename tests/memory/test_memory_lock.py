"""A memory database locked by another process is reported and the run goes on without memory."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

from testkit.runs_support import FIX_EDIT, journal_records

LOCKER = """
import sqlite3, sys, time
conn = sqlite3.connect(sys.argv[1], isolation_level=None)
conn.execute("CREATE TABLE IF NOT EXISTS other (x)")
conn.execute("BEGIN EXCLUSIVE")
print("locked", flush=True)
time.sleep(300)
"""


def test_locked_memory_database_does_not_stop_a_run(project: Path, tmp_path: Path, scripted_llm, cli, monkeypatch):
    memory = tmp_path / "mem.sqlite"
    monkeypatch.setenv("AGENTLS_MEMORY__PATH", str(memory))  # a project file may not move the memory outside it
    locker = subprocess.Popen([sys.executable, "-c", LOCKER, str(memory)], stdout=subprocess.PIPE, text=True)
    try:
        assert locker.stdout.readline().strip() == "locked"
        scripted_llm.add("coder", FIX_EDIT)

        run = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json")
    finally:
        locker.kill()
        locker.communicate(timeout=30)

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    warnings = [r["event"]["text"] for r in journal_records(project, run.json["run_id"])
                if r["type"] == "event" and r["event"].get("type") == "message"]
    assert any(str(memory) in w and "locked" in w and "continuing without memory" in w for w in warnings), warnings
    assert "continuing without memory" in run.stderr, "the user is told"
