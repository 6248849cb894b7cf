"""Sample and verify: k coder answers per round, deduplicated, tested on the failing tests, then the suite.

The real openai client against the scripted server (which honours `n`, or
not), a real sandbox, real files.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import FIX_EDIT, WRONG_EDIT, journal_records
from testkit.scripted_llm import Samples

# Another wrong answer, and WRONG_EDIT again written differently (same AST: a duplicate).
NEGATE_EDIT = {"edits": [{"path": "calc.py", "search": "    return a - b", "replace": "    return -a - b"}]}
WRONG_RESPACED = "### calc.py\n```python\ndef add(a, b):\n    return (a*b)  # multiply\n```\n"


def _candidates(project: Path, run_id: str) -> list[dict]:
    return [r for r in journal_records(project, run_id) if r["type"] == "candidate"]


def _run_end(project: Path, run_id: str) -> dict:
    return next(r for r in journal_records(project, run_id) if r["type"] == "run_end")


def test_three_candidates_one_right_is_fixed_in_one_round(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", Samples([WRONG_EDIT, NEGATE_EDIT, FIX_EDIT]))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed" and out["iterations"] == 1 and out["files_changed"] == ["calc.py"]
    coder = scripted_llm.requests_for("coder")
    assert len(coder) == 1 and coder[0]["n"] == 3, "one request for all three answers (the endpoint honours n)"
    assert scripted_llm.requests_for("reflector") == [], "no second round"
    cands = _candidates(project, out["run_id"])
    assert [c["verdict"] for c in cands] == ["failing-tests", "failing-tests", "passed"]
    # the wrong ones ran only the failing test (test_mul not run: 0 passed), the right one the whole suite
    figures = [{k: v for k, v in c["tests"].items() if k != "duration_s"} for c in cands]
    assert figures[:2] == [{"passed": 0, "failed": 1, "errors": 0, "whole_suite": False, "timed_out": False}] * 2
    assert figures[2] == {"passed": 2, "failed": 0, "errors": 0, "whole_suite": True, "timed_out": False}
    assert "+    return a + b" in cands[2]["diff"] and all(c["tokens"] > 0 for c in cands)
    reports = [r for r in journal_records(project, out["run_id"]) if r["type"] == "test_report"]
    assert len(reports) == 2 and reports[1].get("reused") is True, "the verified suite run is not run again"
    end = _run_end(project, out["run_id"])
    assert end["usage_by_role"]["coder"]["llm_calls"] == 1
    assert end["usage"]["completion_tokens"] == sum(u["completion_tokens"] for u in end["usage_by_role"].values())
    call = next(r for r in journal_records(project, out["run_id"]) if r["type"] == "llm_call")
    assert len(call["alternatives"]) == 2, "the journal keeps every choice of the request"


def test_without_n_each_further_answer_is_asked_for_only_after_the_last_failed(project: Path, scripted_llm,
                                                                               run_fix):
    scripted_llm.honour_n = False  # as llama-cpp-python's server: one choice whatever n says
    for answer in (WRONG_EDIT, WRONG_RESPACED, FIX_EDIT):
        scripted_llm.add("coder", answer)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 1, run.stderr
    coder = scripted_llm.requests_for("coder")
    assert [r["temperature"] for r in coder] == [0.2, 0.55, 0.9], "spread temperatures, the configured one first"
    assert [r.get("n") for r in coder] == [3, None, None], "asked for all three once, then one at a time"
    assert len({json.dumps(r["messages"]) for r in coder}) == 1, "the same prompt each time (a shared prefix)"
    by_index = {c["index"]: c for c in _candidates(project, run.json["run_id"])}
    assert [by_index[i]["verdict"] for i in range(3)] == ["failing-tests", "duplicate", "passed"]
    assert by_index[1]["tests"] is None, "the duplicate (same AST as the first) is never run"
    assert [by_index[i]["temperature"] for i in range(3)] == [0.2, 0.55, 0.9]
    assert _run_end(project, run.json["run_id"])["usage_by_role"]["coder"]["llm_calls"] == 3


def test_without_n_a_first_answer_that_passes_costs_one_request(project: Path, scripted_llm, run_fix):
    scripted_llm.honour_n = False
    scripted_llm.add("coder", FIX_EDIT)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.json["status"] == "fixed" and run.json["iterations"] == 1, run.stderr
    assert len(scripted_llm.requests_for("coder")) == 1, "no answer is drawn that the tests do not need"
    assert [c["verdict"] for c in _candidates(project, run.json["run_id"])] == ["passed"]


def test_all_candidates_failing_become_the_tried_notes_of_the_next_round(project: Path, scripted_llm, run_fix):
    (project / ".agentls.toml").write_text("samples = 2\n")
    scripted_llm.add("coder", Samples([WRONG_EDIT, NEGATE_EDIT]))
    scripted_llm.add("reflector", {"hypothesis": "add subtracts", "file": "calc.py", "change": "return a + b",
                                   "confidence": "high"})
    scripted_llm.add("coder", Samples([FIX_EDIT]))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 2, run.stderr
    first, second = scripted_llm.requests_for("coder")
    assert first["n"] == 2
    prompt = json.dumps(second["messages"])
    assert "Tried before" in prompt
    assert "+    return a * b" in prompt and "+    return -a - b" in prompt, "both failed candidates, as diffs"
    assert prompt.count("Result: 1 failed, 0 errors") == 2
    verdicts = [c["verdict"] for c in _candidates(project, run.json["run_id"])]
    # round 2: the endpoint gave the same answer twice; one distinct answer is not pre-tested (the test node does)
    assert verdicts == ["failing-tests", "failing-tests", "duplicate", "single"]


def test_a_candidate_the_gate_flags_is_not_run_before_the_gate(project: Path, scripted_llm, run_fix):
    risky = {"edits": [{"path": "calc.py", "search": "    return a - b",
                        "replace": "    import os\n    os.system('true')\n    return a - b"}]}
    (project / ".agentls.toml").write_text('samples = 2\nsafety = "block"\n')
    scripted_llm.add("coder", Samples([risky, FIX_EDIT]))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.json["status"] == "fixed", run.stderr
    verdicts = [c["verdict"] for c in _candidates(project, run.json["run_id"])]
    assert verdicts == ["gate", "passed"]


def test_a_candidate_that_hangs_is_stopped_at_the_subset_bound(project: Path, scripted_llm, run_fix):
    """A looping candidate costs seconds: the per-test bound cuts the looping test (or, failing that, the
    failing-tests run's own bound of 5x the baseline suite, at least 20 s), never the sandbox's 120 s."""
    hang = {"edits": [{"path": "calc.py", "search": "    return a - b",
                       "replace": "    while a != b or True:\n        a += 0\n    return a + b"}]}
    (project / ".agentls.toml").write_text("samples = 2\n[sandbox]\ntimeout_s = 120\n")
    scripted_llm.add("coder", Samples([hang, FIX_EDIT]))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.json["status"] == "fixed" and run.json["iterations"] == 1, run.stderr
    hung, fixed = _candidates(project, run.json["run_id"])
    assert hung["verdict"] == "failing-tests" and hung["tests"]["failed"] + hung["tests"]["errors"] >= 1
    assert hung["tests"]["duration_s"] < 20, "stopped by the per-test bound, not the sandbox timeout"
    assert fixed["verdict"] == "passed"
    baseline = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "test_report")
    assert baseline["report"]["duration_s"] * 5 < 20, "the bound here is the 20 s floor"
