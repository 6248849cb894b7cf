"""`agentls fix --hint`: the user's steer reaches the coder's prompt and the trace, and changes no verdict."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.journal.render import render_text
from agent_core.models import RunRequest
from agent_core.pipeline.goal import HINT_LIMIT, default_goal
from engine_support import FIX_EDIT

HINT = "HINT-MARKER: the bug is in add, look at its operator"


def test_the_hint_follows_the_pointer_and_is_bounded(tmp_path: Path):
    goal = default_goal(RunRequest(kind="fix", workspace=tmp_path, target_file="calc.py", hint="  look\n at add "))
    assert goal == "Fix the failing tests. (file: calc.py)\nThe user's hint: look at add"
    long = default_goal(RunRequest(kind="fix", workspace=tmp_path, hint="x" * 5000))
    assert long.endswith("x" * HINT_LIMIT) and "x" * (HINT_LIMIT + 1) not in long
    assert default_goal(RunRequest(kind="fix", workspace=tmp_path, hint="   ")) == "Fix the failing tests."


def test_fix_with_a_hint_shows_it_to_the_coder_and_in_the_trace(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FIX_EDIT)
    scripted_llm.add("explainer", "add subtracted; it now adds.")

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--hint", HINT, "--json")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed"
    coder_prompt = json.dumps(scripted_llm.requests_for("coder")[0]["messages"])
    assert "The user's hint: HINT-MARKER" in coder_prompt
    assert f"hint: {HINT}" in render_text(project, out["run_id"])
