"""bench/fix_rate.py's harness with a stand-in `agentls` (the real benchmark is not run by tests).

The stand-in receives the task copy, fixes one task for real (applying the
corpus's fix.patch), claims a fix it did not make on another, and gives up
on a third; the harness must hide the answer from the run, re-check claimed
fixes with pytest, and count and list accordingly.
"""

from __future__ import annotations

import json
import sys
import textwrap
from pathlib import Path

from bench import fix_rate

ROOT = Path(__file__).resolve().parents[2]

STAND_IN = textwrap.dedent(
    """
    import json, os, subprocess, sys
    from pathlib import Path
    workspace = Path(sys.argv[2])
    assert sys.argv[1] == "fix" and "--json" in sys.argv and "--apply" in sys.argv
    assert not (workspace / "fix.patch").exists() and not (workspace / "task.toml").exists(), "answer leaked"
    usage = {"prompt_tokens": 100, "completion_tokens": 20, "llm_calls": 2}
    if workspace.name == "factorial_base_case":
        patch = Path(os.environ["STAND_IN_CORPUS"]) / workspace.name / "fix.patch"
        subprocess.run(["git", "apply", str(patch)], cwd=workspace, check=True)
        print(json.dumps({"status": "fixed", "iterations": 1, "usage": usage, "failures": []}))
    elif workspace.name == "clamp_min_max":
        print(json.dumps({"status": "fixed", "iterations": 2, "usage": usage, "failures": []}))
    else:
        print(json.dumps({"status": "unfixed", "iterations": 3, "usage": usage,
                          "failures": [{"nodeid": "test_x.py::test_y"}], "error": None}))
    """
)


def test_harness_counts_rechecks_and_lists(tmp_path: Path, capsys, monkeypatch):
    stand_in = tmp_path / "agentls_stand_in.py"
    stand_in.write_text(STAND_IN)
    monkeypatch.setenv("AGENTLS_BASE_URL", "http://127.0.0.1:9/v1")  # an endpoint is "configured": no local model
    monkeypatch.setenv("STAND_IN_CORPUS", str(ROOT / "bench" / "corpus"))
    out = tmp_path / "results.json"
    code = fix_rate.main(["--tasks", "factorial_base_case", "clamp_min_max", "vowels_case", "--out", str(out),
                          "--agentls", sys.executable, str(stand_in)])
    assert code == 0
    by_name = {r["task"]: r for r in json.loads(out.read_text())}
    assert by_name["factorial_base_case"]["verified"] is True
    assert by_name["clamp_min_max"]["status"] == "fixed" and by_name["clamp_min_max"]["verified"] is False
    assert by_name["vowels_case"]["status"] == "unfixed" and by_name["vowels_case"]["tokens"] == 120
    text = capsys.readouterr().out
    assert "fixed after iteration 1:    1/3" in text
    assert "fixed after last iteration: 2/3 (re-checked by pytest here: 1/3)" in text
    assert "median tokens per task:     120" in text
    listed = text.split("not fixed:")[1]
    assert "clamp_min_max" in listed and "fixed but re-check failed" in listed
    assert "vowels_case" in listed and "test_x.py::test_y" in listed
    assert "factorial_base_case" not in listed


MEMORY_STAND_IN = textwrap.dedent(
    """
    import json, os, subprocess, sys, tomllib
    from pathlib import Path
    workspace = Path(sys.argv[2])
    settings = tomllib.loads((workspace / ".agentls.toml").read_text())
    with open(os.environ["STAND_IN_LOG"], "a") as log:
        log.write(json.dumps([workspace.name, os.environ["AGENTLS_MEMORY__PATH"], os.environ["XDG_CACHE_HOME"]])
                  + "\\n")
    patch = Path(os.environ["STAND_IN_CORPUS"]) / workspace.name / "fix.patch"
    subprocess.run(["git", "apply", str(patch)], cwd=workspace, check=True)
    if workspace.name == "factorial_base_case":  # the search found it: no model call, no tokens
        print(json.dumps({"status": "fixed", "iterations": 0, "found_by": "search",
                          "usage": {"prompt_tokens": 0, "completion_tokens": 0, "llm_calls": 0}}))
    else:
        print(json.dumps({"status": "fixed", "iterations": 2,
                          "usage": {"prompt_tokens": 300, "completion_tokens": 50, "llm_calls": 2}}))
    """
)


def _run_memory_mode(tmp_path: Path, monkeypatch, mode: list[str]) -> tuple[list, list[dict]]:
    stand_in = tmp_path / "memory_stand_in.py"
    stand_in.write_text(MEMORY_STAND_IN)
    log = tmp_path / f"log-{mode[1]}.jsonl"
    monkeypatch.setenv("AGENTLS_BASE_URL", "http://127.0.0.1:9/v1")
    monkeypatch.setenv("STAND_IN_CORPUS", str(ROOT / "bench" / "corpus"))
    monkeypatch.setenv("STAND_IN_LOG", str(log))
    out = tmp_path / f"rows-{mode[1]}.json"
    code = fix_rate.main(["--tasks", "factorial_base_case", "clamp_min_max", *mode, "--out", str(out),
                          "--agentls", sys.executable, str(stand_in)])
    assert code == 0
    calls = [json.loads(line) for line in log.read_text().splitlines()]
    return calls, json.loads(out.read_text())


def test_fresh_memory_gives_each_task_its_own_file(tmp_path: Path, monkeypatch, capsys):
    calls, rows = _run_memory_mode(tmp_path, monkeypatch, ["--memory", "fresh"])
    assert [c[0] for c in calls] == ["clamp_min_max", "factorial_base_case"]
    assert calls[0][1] != calls[1][1] and calls[0][2] != calls[1][2]
    assert {r["memory"] for r in rows} == {"fresh"}
    by_name = {r["task"]: r for r in rows}
    assert by_name["factorial_base_case"]["outcome"] == "search" and by_name["factorial_base_case"]["tokens"] == 0
    assert by_name["clamp_min_max"]["outcome"] == "later round" and by_name["clamp_min_max"]["found_by"] == "model"
    text = capsys.readouterr().out
    assert "fixed by search alone:      1/2 (0 tokens)" in text
    assert "fixed by first model round: 0/2" in text and "fixed by later rounds:      1/2" in text
    assert "total tokens:               350" in text
    table_line = next(line for line in text.splitlines() if line.startswith("factorial_base_case"))
    assert "search" in table_line.split()


def test_carried_memory_is_one_file_across_the_corpus_and_kept(tmp_path: Path, monkeypatch):
    kept = tmp_path / "kept" / "memory.sqlite"
    calls, rows = _run_memory_mode(tmp_path, monkeypatch, ["--memory", "carried", "--memory-file", str(kept)])
    assert [c[1] for c in calls] == [str(kept), str(kept)]
    assert calls[0][2] == calls[1][2], "one cache dir carried too"
    assert {r["memory"] for r in rows} == {"carried"} and kept.parent.is_dir()


def test_outcome_counts_only_verified_fixes():
    row = {"verified": False, "found_by": "search", "iterations": 0}
    assert fix_rate.outcome(row) == "not fixed"
    assert fix_rate.outcome(row | {"verified": True}) == "search"
    assert fix_rate.outcome(row | {"verified": True, "found_by": "model", "iterations": 1}) == "first round"
    assert fix_rate.outcome(row | {"verified": True, "found_by": "model", "iterations": 3}) == "later round"
    assert fix_rate.outcome(row | {"verified": True, "found_by": "infill"}) == "infill"
    assert fix_rate.outcome(row | {"verified": False, "found_by": "infill"}) == "not fixed"
    assert fix_rate.found_by({"status": "fixed"}) == "model"
    assert fix_rate.found_by({"status": "fixed", "found_by": "search"}) == "search"


def test_written_settings_are_what_agentls_reads(tmp_path: Path):
    from agent_core.settings import load_settings

    memory_file = tmp_path / "mem" / "carried.sqlite"
    fix_rate.write_settings(tmp_path, memory_file, {"test_command": 'pytest tests --deselect "t.py::a b"'})
    settings = load_settings(tmp_path, env={"AGENTLS_CONFIG": str(tmp_path / "none.toml"),
                                            **fix_rate.memory_env(memory_file)})
    assert settings.memory.path == str(memory_file) and memory_file.parent.is_dir()
    assert settings.ignored == [], "nothing the bench writes is outside a project file's trust boundary"
    assert settings.test_command == 'pytest tests --deselect "t.py::a b"'


def test_memory_file_options_are_checked_before_any_task(tmp_path: Path, capsys, monkeypatch):
    monkeypatch.setenv("AGENTLS_BASE_URL", "http://127.0.0.1:9/v1")  # never the local model, whatever happens
    used = tmp_path / "used.sqlite"
    used.write_bytes(b"earlier run")
    assert fix_rate.main(["--memory", "fresh", "--memory-file", str(tmp_path / "m.sqlite")]) == 2
    assert fix_rate.main(["--memory", "carried", "--memory-file", str(used)]) == 2
    err = capsys.readouterr().err
    assert "needs --memory carried" in err and "exists" in err and used.read_bytes() == b"earlier run"


def test_a_search_fix_is_read_from_the_journal_when_the_json_lacks_it(tmp_path: Path):
    runs = tmp_path / ".agentls" / "runs" / "r1"
    runs.mkdir(parents=True)
    found = {"file": "calc.py", "line": 4, "before": "    return a - b\n", "after": "    return a + b\n"}
    runs.joinpath("journal.jsonl").write_text(json.dumps({"type": "start"}) + "\n"
                                              + json.dumps({"type": "search", "found": found}) + "\n")
    edit = fix_rate.search_edit(tmp_path, "r1")
    assert edit == "calc.py:4: return a - b -> return a + b"
    assert fix_rate.found_by({"status": "fixed"}, edit) == "search"
    assert fix_rate.search_edit(tmp_path, "missing-run") == "" and fix_rate.search_edit(tmp_path, "") == ""
    task = fix_rate.Task(name="calc", kind="operator", prepare=lambda d: d, check=lambda d: True)
    row = fix_rate.make_row(task, {"status": "fixed", "iterations": 0}, 2.0, True, "fresh", edit)
    assert row["outcome"] == "search" and row["search_edit"] == edit
    assert "calc                             calc.py:4: return a - b -> return a + b" in fix_rate.report([row])


def test_the_time_split_and_the_fills_are_read_from_the_journal(tmp_path: Path):
    runs = tmp_path / ".agentls" / "runs" / "r1"
    runs.mkdir(parents=True)
    infill = {"holes": 3, "samples": 14, "kept": 9, "tried": 9, "tokens": 4200, "seconds": 42.0, "won": "line 5 (line)",
              "per_hole": [{"hole": "line 5 (line)"}]}
    records = [{"type": "node_exit", "node": "baseline", "duration_s": 2.04},
               {"type": "node_exit", "node": "search", "duration_s": 100.0},
               {"type": "search", "found": None, "mutants": 300, "tried": 120, "infill": infill},
               {"type": "node_exit", "node": "test", "duration_s": 1.0},
               {"type": "node_exit", "node": "test", "duration_s": 2.5}]
    runs.joinpath("journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))

    split = fix_rate.time_split(tmp_path, "r1")

    assert split["nodes"] == {"baseline": 2.0, "search": 100.0, "test": 3.5}
    assert split["infill"] == {k: v for k, v in infill.items() if k != "per_hole"}
    assert (split["mutants"], split["mutants_tried"]) == (300, 120)
    assert fix_rate.time_split(tmp_path) == split, "a run cut at the timeout: the newest journal"
    assert split["holes"] == [[None, "line 5 (line)"]], "each hole's path and label"
    assert fix_rate.time_split(tmp_path, "missing") == {"nodes": {}, "infill": {}, "holes": [], "mutants": None,
                                                        "mutants_tried": None}
    per_hole = [{"hole": "line 5 (line)", "answered": 5, "unchanged": 2}, {"hole": "line 6 (line)", "answered": 3,
                                                                          "unchanged": 0}]
    records[2]["infill"] = infill | {"per_hole": per_hole}
    runs.joinpath("journal.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    assert fix_rate.time_split(tmp_path, "r1")["infill"] == split["infill"] | {"answered": 8, "unchanged": 2}, \
        "the answers that wrote their hole back, summed over the holes"
