"""Per-role model profiles and several API keys (seed 003): each role reaches its own endpoint with its key."""

from __future__ import annotations

from pathlib import Path

import pytest

from testkit.runs_support import FIX_EDIT, PLAN, run_dir
from testkit.scripted_llm import ScriptedLLM

PLANNER_KEY = "pk-planner-4c1d9e-ONLY-IN-ENV"
CODER_KEY = "ck-coder-7b2a0f-ONLY-IN-ENV"


def test_each_role_uses_its_endpoint_model_and_key(project: Path, scripted_llm, cli, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("LRN_PLANNER_KEY", PLANNER_KEY)
    monkeypatch.setenv("LRN_CODER_KEY", CODER_KEY)
    planner_server = ScriptedLLM().start()
    try:
        user = project.parent / "user-config.toml"  # endpoints and key variables: the user's file, not the project's
        monkeypatch.setenv("AGENTLS_CONFIG", str(user))
        user.write_text(
            f'base_url = "{scripted_llm.base_url}"\nmodel = "shared-model"\n'
            f'[roles.planner]\nbase_url = "{planner_server.base_url}"\nmodel = "planner-model"\n'
            'api_key_env = "LRN_PLANNER_KEY"\n'
            '[roles.coder]\nmodel = "coder-model"\napiKeyEnv = "LRN_CODER_KEY"\n'
        )
        planner_server.add("planner", PLAN)
        scripted_llm.add("coder", FIX_EDIT)
        scripted_llm.add("explainer", "add subtracted; it adds now.")  # on the reflector's profile

        run = cli("fix", str(project), "--goal", "make add add", "--json")

        assert run.code == 0 and run.json["status"] == "fixed", run.stderr
        assert [r["role"] for r in planner_server.requests] == ["planner"]
        assert [r["role"] for r in scripted_llm.requests] == ["coder", "explainer"]
        assert scripted_llm.requests[1]["model"] == "shared-model"
        assert planner_server.requests[0]["model"] == "planner-model"
        assert scripted_llm.requests[0]["model"] == "coder-model"
        assert planner_server.request_headers[0]["authorization"] == f"Bearer {PLANNER_KEY}"
        assert scripted_llm.request_headers[0]["authorization"] == f"Bearer {CODER_KEY}"
        for path in [p for p in run_dir(project, run.json["run_id"]).iterdir() if p.is_file()]:
            data = path.read_bytes()
            assert PLANNER_KEY.encode() not in data and CODER_KEY.encode() not in data, path
        config = user.read_text()
        assert PLANNER_KEY not in config and CODER_KEY not in config, "files name the variables, not the keys"
    finally:
        planner_server.stop()
