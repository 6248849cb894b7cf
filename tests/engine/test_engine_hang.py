"""A candidate that loops forever costs seconds: the per-test bound cuts it at its line and the run goes on.

`agentls fix` in-process, the real openai client against the scripted server,
the real bubblewrap sandbox. The bound is derived from the baseline (its
passing test takes milliseconds, so 2 s); the run's own timeout (120 s) never
fires.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import FIX_EDIT, journal_records

HANGING_EDIT = {"edits": [{"path": "calc.py", "search": "    return a - b",
                           "replace": "    while a != b:\n        a = a * 1\n    return a + b"}],
                "explanation": "loop until equal"}


def test_a_hanging_candidate_is_cut_at_its_line_and_the_next_one_fixes(project: Path, scripted_llm, run_fix):
    (project / ".agentls.toml").write_text('[sandbox]\nbackend = "bubblewrap"\ntimeout_s = 120\n')
    scripted_llm.add("coder", HANGING_EDIT)
    scripted_llm.add("reflector", {"hypothesis": "the loop never ends", "file": "calc.py",
                                   "change": "return a + b", "confidence": "high"})
    scripted_llm.add("coder", FIX_EDIT)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["iterations"] == 2
    reports = [r["report"] for r in journal_records(project, run.json["run_id"]) if r["type"] == "test_report"]
    hung = reports[1]
    assert not hung["timed_out"], "the per-test bound stopped it, not the run's timeout"
    assert (hung["passed"], hung["failed"]) == (1, 1), "test_mul still ran"
    [failure] = hung["failures"]
    assert failure["nodeid"] == "test_calc.py::test_add" and failure["line"] == 5
    assert failure["source_file"] == "calc.py" and failure["source_line"] in (2, 3)
    assert "per-test bound" in failure["message"]
    reflector_prompt = json.dumps(scripted_llm.requests_for("reflector")[0]["messages"])
    assert "per-test bound" in reflector_prompt, "the reflector is told where and why it hung"
