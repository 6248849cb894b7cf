"""`agentls fix` end to end: the real openai client against the scripted server, a real sandbox."""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import FIX_EDIT, WRONG_EDIT, journal_records, snapshot


def test_one_line_bug_fixed_in_one_iteration(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", "add subtracted. It now adds, so test_add passes.")
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed" and out["iterations"] == 1 and out["error"] is None
    assert out["files_changed"] == ["calc.py"]
    assert out["tests"] == {"passed": 2, "failed": 0, "errors": 0, "skipped": 0}
    assert out["usage"]["llm_calls"] == 2 and out["usage"]["prompt_tokens"] > 0
    assert snapshot(project) == before, "without --apply nothing is written"
    # the textual pre-plan handled 'fix the failing tests': no planner call; then the explanation
    assert [r["role"] for r in scripted_llm.requests] == ["coder", "explainer"]
    assert out["explanation"] == "add subtracted. It now adds, so test_add passes."
    coder_prompt = json.dumps(scripted_llm.requests_for("coder")[0]["messages"])
    assert "test_add" in coder_prompt and "return a - b" in coder_prompt
    records = journal_records(project, out["run_id"])
    types = [r["type"] for r in records]
    assert types[0] == "run_start" and types[-1] == "run_end"
    assert {"node_enter", "node_exit", "llm_call", "tool_call", "gate", "test_report", "plan", "change_set"} <= set(
        types
    )
    raw = (project / ".agentls" / "runs" / out["run_id"] / "journal.jsonl").read_text()
    assert "sk-test-SECRET-0123456789" not in raw
    summary = json.loads((project / ".agentls" / "runs" / out["run_id"] / "summary.json").read_text())
    assert summary["status"] == "fixed" and "new" not in summary["change_set"]["changes"][0]


def test_fixed_after_a_failed_attempt_and_a_reflection(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", WRONG_EDIT)
    scripted_llm.add(
        "reflector",
        {
            "hypothesis": "add multiplies instead of adding",
            "file": "calc.py",
            "change": "return a + b",
            "confidence": "high",
        },
    )
    scripted_llm.add("coder", FIX_EDIT)  # the wrong attempt did no better, so it was undone: same search again

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["iterations"] == 2
    second = json.dumps(scripted_llm.requests_for("coder")[1]["messages"])
    assert "assert -1 == 5" in second, "the second coder prompt carries the failing output of the code it sees"
    assert "-    return a - b\\n+    return a * b" in second, "the undone attempt, as a diff"
    assert "Result: 1 failed, 0 errors: assert 6 == 5" in second, "with what it led to"
    assert "add multiplies instead of adding" in second, "and the reflector's hypothesis"
    reflector_prompt = json.dumps(scripted_llm.requests_for("reflector")[0]["messages"])
    assert "return a * b" in reflector_prompt, "the reflector sees the attempted change"


def test_budget_exhausted_is_unfixed_and_touches_nothing(project: Path, scripted_llm, run_fix):
    scripted_llm.default("coder", WRONG_EDIT)
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})
    scripted_llm.default(
        "planner",
        {
            "approach": "retry",
            "subtasks": [
                {
                    "id": "t1",
                    "description": "fix add in calc.py",
                    "priority": 5,
                    "dependencies": [],
                    "files": ["calc.py"],
                }
            ],
        },
    )
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "2", "--apply")

    assert run.code == 1, run.stderr
    out = run.json
    assert out["status"] == "unfixed" and out["iterations"] == 2 and out["files_changed"] == []
    assert snapshot(project) == before, "an unfixed run writes nothing, even with --apply"
    assert out["failures"] == [
        {
            "nodeid": "test_calc.py::test_add",
            "file": "test_calc.py",
            "line": 5,
            "message": out["failures"][0]["message"],
        }
    ]
    assert len(scripted_llm.requests_for("coder")) == 2


def test_plan_with_a_dependency_cycle_is_rejected(project: Path, scripted_llm, run_fix):
    cyclic = {
        "approach": "x",
        "subtasks": [
            {"id": "t1", "description": "a", "priority": 3, "dependencies": ["t2"], "files": []},
            {"id": "t2", "description": "b", "priority": 3, "dependencies": ["t1"], "files": []},
        ],
    }
    scripted_llm.default("planner", cyclic)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--goal", "Support adding strings")

    out = run.json
    assert out["status"] == "error" and run.code == 1
    assert out["error"] == "plan has a dependency cycle: t1 -> t2 -> t1"
    planner = scripted_llm.requests_for("planner")
    assert len(planner) == 2, "re-requested once with the error"
    assert "plan has a dependency cycle: t1 -> t2 -> t1" in json.dumps(planner[1]["messages"])
    assert scripted_llm.requests_for("coder") == []


def test_coder_writing_outside_the_workspace_is_refused(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", {"edits": [{"path": "../outside.txt", "search": "", "replace": "pwned\n"}]})
    outside = project.parent / "outside.txt"

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1")

    assert not outside.exists()
    assert run.json["status"] == "unfixed" and run.code == 1
    refusals = [r for r in journal_records(project, run.json["run_id"]) if r["type"] == "tool_call" and not r["ok"]]
    assert refusals and "outside the workspace" in refusals[0]["result"]
    assert refusals[0]["args"]["path"] == "../outside.txt"


def test_apply_writes_exactly_the_reported_files(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    after = snapshot(project)
    changed = sorted(k for k in after if after[k] != before.get(k)) + sorted(set(before) - set(after))
    assert changed == run.json["files_changed"] == ["calc.py"]
    assert after["calc.py"] == before["calc.py"].replace(b"a - b", b"a + b")


def test_unsafe_change_fails_the_run_without_allow_unsafe(project: Path, scripted_llm, run_fix):
    scripted_llm.add(
        "coder",
        {
            "edits": [
                {
                    "path": "calc.py",
                    "search": "    return a - b",
                    "replace": "    import os\n    os.system('true')\n    return a + b",
                }
            ]
        },
    )

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.json["status"] == "error" and run.code == 1
    assert run.json["error"].startswith("rejected by the safety gate: calc.py:3")
    assert b"os.system" not in (project / "calc.py").read_bytes()


def test_code_handed_back_unchanged_is_named_as_such_in_the_next_prompt(project: Path, scripted_llm, run_fix):
    echo = {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return a - b"}]}
    scripted_llm.add("coder", echo)
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", "add subtracted; it adds now.")

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["iterations"] == 2
    roles = [r["role"] for r in scripted_llm.requests]
    assert roles == ["coder", "coder", "explainer"], "nothing changed: no reflector call, only the explanation"
    second = scripted_llm.requests_for("coder")[1]["messages"][-1]["content"]
    assert (
        "Analysis of the last attempt: The last answer repeated the code unchanged, so the bug is still in it.\n"
        in second
    )
    assert "Your previous answer was not used:\n- the answer gave the code back unchanged" in second
    assert "Tried before" not in second and "Suggested change" not in second, "no empty attempt, no empty suggestion"
