"""The journal writer: record shape, redaction of secrets, summary and diff files."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.journal.writer import REDACTED, Journal
from agent_core.llm.base import LLMCall
from agent_core.models import ChangeSet, RunResult, Usage
from agent_core.workspace.changeset import file_change


def test_records_are_redacted_and_shaped(tmp_path: Path):
    journal = Journal(tmp_path, "20261121-000000-abcd", secrets=["my-configured-key-42"])
    journal.write("tool_call", tool="read_file", args={"path": "a.py"}, result="key=my-configured-key-42", ok=True)
    journal.on_llm_call(LLMCall(role="coder", schema_name="CoderOutput", mode="json_schema",
                                messages=[{"role": "user", "content": "token sk-abcdefghijklmnop0123 here"}],
                                answer="{}", usage=Usage(prompt_tokens=5, completion_tokens=2), duration_s=0.1))
    records = [json.loads(line) for line in journal.path.read_text().splitlines()]
    assert [r["type"] for r in records] == ["tool_call", "llm_call"]
    assert all({"ts", "run_id", "type"} <= set(r) and r["run_id"] == "20261121-000000-abcd" for r in records)
    raw = journal.path.read_text()
    assert "my-configured-key-42" not in raw and "sk-abcdefghijklmnop0123" not in raw and raw.count(REDACTED) == 2
    assert records[1]["usage"] == {"prompt_tokens": 5, "completion_tokens": 2} and records[1]["schema"] == "CoderOutput"


def test_finish_writes_summary_and_diff(tmp_path: Path):
    journal = Journal(tmp_path, "r1")
    change = file_change("a.py", "x = 1\n", "x = 2\n")
    result = RunResult(run_id="r1", kind="fix", status="fixed", iterations=1, change_set=ChangeSet(changes=[change]))
    journal.finish(result)
    run_dir = tmp_path / ".agentls" / "runs" / "r1"
    summary = json.loads((run_dir / "summary.json").read_text())
    assert summary["status"] == "fixed" and summary["change_set"]["changes"][0]["path"] == "a.py"
    assert "original" not in summary["change_set"]["changes"][0]
    assert (run_dir / "changes.diff").read_text() == change.unified_diff()
    assert json.loads(journal.path.read_text().splitlines()[-1])["type"] == "run_end"


def test_disabled_journal_writes_nothing(tmp_path: Path):
    journal = Journal(tmp_path, "r2", enabled=False)
    journal.write("event", event={})
    journal.finish(RunResult(run_id="r2", kind="fix", status="error"))
    assert not (tmp_path / ".agentls").exists()
