"""bench/fix_rate.py's harness with a stand-in `agentls` (the real benchmark is not run by tests).

The stand-in receives the task copy, fixes one task for real (applying the
corpus's fix.patch), claims a fix it did not make on another, and gives up
on a third; the harness must hide the answer from the run, re-check claimed
fixes with pytest, and count and list accordingly.
"""

from __future__ import annotations

import importlib.util
import json
import sys
import textwrap
from pathlib import Path

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


def _load_fix_rate():
    spec = importlib.util.spec_from_file_location("fix_rate", ROOT / "bench" / "fix_rate.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_harness_counts_rechecks_and_lists(tmp_path: Path, capsys, monkeypatch):
    fix_rate = _load_fix_rate()
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
