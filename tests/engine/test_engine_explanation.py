"""The reason for a verified change: the explainer's sentences, or a templated one when the model fails."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

from agent_core.journal_view import render_markdown
from scripted_llm import Fault

from engine_support import FIX_EDIT, journal_records

MODEL_SAYS = "add subtracted b from a. It now returns a + b, so test_calc.py::test_add passes."


def _explanation_record(project: Path, run_id: str) -> dict:
    (record,) = [r for r in journal_records(project, run_id) if r["type"] == "explanation"]
    return record


def test_the_model_explains_the_verified_diff_above_the_diff_and_in_the_trace(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("reflector", MODEL_SAYS)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url)

    assert run.code == 0, run.stderr
    explained, diff = run.stdout.split("\n\n", 1)
    assert explained == MODEL_SAYS and diff.startswith("--- a/calc.py")
    (call,) = scripted_llm.requests_for("reflector")
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


def test_a_failing_model_call_falls_back_to_a_sentence_from_the_diff_and_the_tests(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("reflector", Fault.status(400))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    out = run.json
    assert run.code == 0 and out["status"] == "fixed", run.stderr
    assert out["explanation"] == ("test_calc.py::test_add failed (assert -1 == 5). "
                                  "Changed add in calc.py; test_calc.py::test_add now passes.")
    record = _explanation_record(project, out["run_id"])
    assert record["source"] == "template" and "the model call failed" in record["problem"]


def test_an_answer_that_is_json_or_code_is_not_used(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("reflector", {"hypothesis": "a JSON object, not sentences"})

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
    best = summary["extra"]["best_attempt"]["changes"][0]
    assert best["path"] == "calc.py" and "new" not in best, "the best attempt is kept, without file texts"
