"""Hangs cost seconds: a looping candidate is cut at its line, and a baseline that hangs is localized to the
loop and fixed by the search.

`agentls fix` in-process, the real openai client against the scripted server,
the real bubblewrap sandbox. The bound is derived from the baseline (its
passing test takes milliseconds, so 2 s); the run's own timeout (120 s) never
fires. At the baseline nothing is known yet: the bound follows the tests that
passed so far, the first hang is waited for and its stack names the loop, and
the other hanging tests get a short bound.
"""

from __future__ import annotations

import json
from pathlib import Path

from engine_support import FIX_EDIT, journal_records, make_project

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


BISECT = {  # `lo = mid` for `lo = mid + 1`: a search that never advances loops forever on three of five tests
    "bsearch.py": (
        "def position(items, target):\n"             # 1
        '    """The leftmost place for target in the sorted items."""\n'  # 2
        "    lo, hi = 0, len(items)\n"               # 3
        "    while lo < hi:\n"                       # 4
        "        mid = (lo + hi) // 2\n"             # 5
        "        if items[mid] < target:\n"          # 6
        "            lo = mid\n"                     # 7
        "        else:\n"                            # 8
        "            hi = mid\n"                     # 9
        "    return lo\n"                            # 10
    ),
    "test_bsearch.py": (
        "from bsearch import position\n\n\n"
        "def test_before_all():\n    assert position([1, 3, 5, 7], 0) == 0\n\n\n"
        "def test_between():\n    assert position([1, 3, 5, 7], 4) == 2\n\n\n"
        "def test_after_all():\n    assert position([1, 3, 5, 7], 9) == 4\n\n\n"
        "def test_empty():\n    assert position([], 3) == 0\n\n\n"
        "def test_last():\n    assert position([2, 4, 6], 6) == 2\n"
    ),
}


def test_a_hanging_baseline_is_localized_to_its_loop_and_fixed_by_the_search(tmp_path: Path, scripted_llm,
                                                                              run_fix, monkeypatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    project = make_project(tmp_path / "proj", BISECT)  # default settings: a 300 s run, so a 60 s per-test cap

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert scripted_llm.requests == [], "the search fixed it: no model call"
    records = journal_records(project, run.json["run_id"])
    baseline = next(r["report"] for r in records if r["type"] == "test_report")
    assert not baseline["timed_out"] and (baseline["passed"], baseline["failed"]) == (2, 3)
    messages = [f["message"] for f in baseline["failures"]]
    assert all("per-test bound" in m for m in messages) and {f["source_line"] for f in baseline["failures"]} == {4}
    waited = [m for m in messages if "shortened" not in m]
    assert len(waited) == 1 and "the 10 s per-test bound" in waited[0], "one test waited for, at the passing pace"
    localize = next(r for r in records if r["type"] == "localize")
    first = localize["suspects"][0]
    assert (first["file"], first["function"], first["lines"][0]) == ("bsearch.py", "position", 4), "the loop's line"
    found = next(r for r in records if r["type"] == "search")["found"]
    assert (found["line"], found["after"]) == (7, "            lo = mid + 1")
    assert run.json["duration_s"] < 240, "four minutes was the old baseline alone (each hang cut at 60 s)"
