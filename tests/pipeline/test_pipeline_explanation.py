"""The reason for a verified change: the explainer's sentences, or a templated one when the model fails."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from agent_core.journal.render import render_markdown
from agent_core.models import ChangeSet, FileChange, TestFailure, TestReport
from agent_core.pipeline.explain import clean_answer, fixed_tests, templated
from agent_core.workspace.changeset import text_edits
from engine_support import FIX_EDIT, journal_records
from testkit.scripted_llm import Fault

MODEL_SAYS = "add subtracted b from a. It now returns a + b, so test_calc.py::test_add passes."


def _explanation_record(project: Path, run_id: str) -> dict:
    (record,) = [r for r in journal_records(project, run_id) if r["type"] == "explanation"]
    return record


def test_the_model_explains_the_verified_diff_above_the_diff_and_in_the_trace(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", MODEL_SAYS)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url)

    assert run.code == 0, run.stderr
    explained, diff = run.stdout.split("\n\n", 1)
    assert explained == MODEL_SAYS and diff.startswith("--- a/calc.py")
    (call,) = scripted_llm.requests_for("explainer")
    assert scripted_llm.requests_for("reflector") == [], "the explainer is named as itself, not as the reflector"
    prompt = call["messages"][-1]["content"]
    assert "-    return a - b\n+    return a + b" in prompt, "the model sees the verified diff"
    assert "test_calc.py::test_add: assert -1 == 5" in prompt, "and the failure it fixed"
    assert call["max_tokens"] <= 120
    run_id = run.stderr.split("runs/")[-1].strip()
    record = _explanation_record(project, run_id)
    assert (record["text"], record["source"], record["problem"]) == (MODEL_SAYS, "model", "")
    assert f"explanation: {MODEL_SAYS}" in render_markdown(project, run_id)
    patched = subprocess.run(["git", "apply", "--check", "-"], input=run.stdout, text=True, cwd=project,
                             capture_output=True, check=False)
    assert patched.returncode == 0, patched.stderr  # the sentences above the diff do not break applying it


def test_a_failing_model_call_falls_back_to_a_sentence_from_the_diff_and_the_tests(
    project: Path, scripted_llm, run_fix
):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", Fault.status(400))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    out = run.json
    assert run.code == 0 and out["status"] == "fixed", run.stderr
    assert out["explanation"] == (
        "test_calc.py::test_add failed (assert -1 == 5). Changed add in calc.py; test_calc.py::test_add now passes."
    )
    record = _explanation_record(project, out["run_id"])
    assert record["source"] == "template" and "the model call failed" in record["problem"]


def test_an_answer_that_is_json_or_code_is_not_used(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", {"hypothesis": "a JSON object, not sentences"})

    out = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json").json

    assert out["explanation"].startswith("test_calc.py::test_add failed")
    assert "JSON" in _explanation_record(project, out["run_id"])["problem"]


def test_an_unfixed_run_has_no_explanation_and_keeps_its_best_attempt(project: Path, scripted_llm, run_fix):
    calc = project / "calc.py"
    calc.write_text(calc.read_text().replace("return a * b", "return a ** b"))  # two bugs: the attempt fixes one
    scripted_llm.default("coder", FIX_EDIT)
    scripted_llm.default("reflector", {"hypothesis": "unsure", "file": "calc.py", "change": "?", "confidence": "low"})

    out = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1").json

    assert out["status"] == "unfixed" and out["explanation"] == ""
    assert not [r for r in journal_records(project, out["run_id"]) if r["type"] == "explanation"]
    summary = json.loads((project / ".agentls" / "runs" / out["run_id"] / "summary.json").read_text())
    best = summary["best_attempt"]["changes"][0]
    assert best["path"] == "calc.py" and "new" not in best, "the best attempt is kept, without file texts"


def _report(*nodeids: str) -> TestReport:
    failures = [TestFailure(nodeid=n, file="test_calc.py", line=5, message="assert -1 == 5\nmore") for n in nodeids]
    return TestReport(passed=1, failed=len(failures), failures=failures)


def _change(path: str, original: str | None, new: str | None, kind: str = "modify") -> FileChange:
    edits = text_edits(original or "", new or "") if kind == "modify" else []
    return FileChange(path=path, kind=kind, original=original, new=new, edits=edits)


def test_the_template_names_the_failure_the_changed_functions_and_files_and_the_tests_that_pass():
    calc = "def add(a, b):\n    return a - b\n\n\ndef mul(a, b):\n    return a * b\n"
    change_set = ChangeSet(
        changes=[
            _change("calc.py", calc, calc.replace("a - b", "a + b").replace("a * b", "b * a")),
            _change("notes.txt", None, "x\n", kind="create"),
        ]
    )
    baseline = _report("test_calc.py::test_add", "test_calc.py::test_mul")
    fixed = fixed_tests(baseline, TestReport(passed=3))
    assert fixed == ["test_calc.py::test_add", "test_calc.py::test_mul"]
    assert templated(change_set, baseline, fixed, "fix it") == (
        "test_calc.py::test_add failed (assert -1 == 5). Changed add, mul in calc.py; created notes.txt; "
        "test_calc.py::test_add, test_calc.py::test_mul now pass."
    )
    task = templated(change_set, TestReport(passed=2), [], "add a --verbose flag\nand more")
    assert task == "Changed add, mul in calc.py; created notes.txt for the goal: add a --verbose flag; the tests pass."


def test_a_model_answer_is_kept_to_two_sentences_on_one_line_and_unusable_ones_are_refused():
    assert clean_answer("  One.\nTwo sentences!  Three? ") == ("One. Two sentences!", "")
    assert clean_answer("")[0] == "" and clean_answer("```python\nx\n```")[0] == ""
    assert clean_answer('{"hypothesis": "x"}') == ("", "the answer was code or JSON, not sentences")
    long_text, _ = clean_answer("word " * 200)
    assert len(long_text) <= 400 and long_text.endswith("...")


def test_an_explainer_call_cut_by_its_deadline_is_journaled_as_a_call(
    project: Path, scripted_llm, run_fix, monkeypatch: pytest.MonkeyPatch
):
    from agent_core.pipeline import explain

    monkeypatch.setattr(explain, "TIMEOUT_S", 1.0)
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", Fault.hang(8, then=MODEL_SAYS))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    out = run.json
    assert run.code == 0 and out["status"] == "fixed", run.stderr
    assert _explanation_record(project, out["run_id"])["source"] == "template"
    calls = [r for r in journal_records(project, out["run_id"]) if r["type"] == "llm_call"]
    assert [c["role"] for c in calls] == ["coder", "explainer"], "the cut call is in the journal, beside the coder's"
    assert calls[1]["cut"] is True and calls[1]["answer"] == "" and 0.9 <= calls[1]["duration_s"] < 8
    assert "cut" not in calls[0]
    assert out["usage"]["llm_calls"] == 2, "and counted"
