"""The fills' figures the fix-rate benches print, read from a run's journal (bench/fix_rate.py `time_split`) and
summed over a run's rows (bench/history_fix_rate.py `fills`)."""

from __future__ import annotations

import json
from pathlib import Path

from bench.fix_rate import time_split
from bench.history_fix_rate import fills

HOLES = [
    {"path": "m.py", "hole": "line 5 (condition and ...)", "answered": 6, "unchanged": 1, "twins": 2},
    {"path": "m.py", "hole": "slot after line 5", "answered": 4, "unchanged": 0, "twins": 0},
]


def _run(workspace: Path, per_hole: list[dict]) -> None:
    journal = workspace / ".agentls" / "runs" / "r1" / "journal.jsonl"
    journal.parent.mkdir(parents=True)
    records = [{"type": "node_exit", "node": "search", "duration_s": 40.0},
               {"type": "search", "mutants": 900, "tried": 300,
                "infill": {"holes": 2, "samples": 10, "kept": 7, "tried": 7, "seconds": 30.0, "per_hole": per_hole}}]
    journal.write_text("".join(json.dumps(r) + "\n" for r in records))


def test_a_run_s_fills_count_the_answers_written_back_and_the_candidates_made_at_twins(tmp_path: Path):
    _run(tmp_path, HOLES)

    split = time_split(tmp_path, "r1")

    assert split["infill"]["answered"] == 10 and split["infill"]["unchanged"] == 1
    assert split["infill"]["twins"] == 2
    assert split["holes"] == [["m.py", "line 5 (condition and ...)"], ["m.py", "slot after line 5"]]
    lines = fills([{"split": split}])
    assert "candidates made at a line's twins too: 2" in lines
    assert lines[0].startswith("model fills: 1 tasks asked, 2 holes, 10 samples, 7 candidates, 7 tried, 14.0")


def test_a_journal_from_before_twins_were_counted_says_nothing_of_them(tmp_path: Path):
    _run(tmp_path, [{k: v for k, v in hole.items() if k != "twins"} for hole in HOLES])

    split = time_split(tmp_path, "r1")

    assert "twins" not in split["infill"] and split["infill"]["unchanged"] == 1
    assert not any("twins" in line for line in fills([{"split": split}]))
