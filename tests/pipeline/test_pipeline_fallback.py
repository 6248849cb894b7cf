"""Escalation: a fallback model (a second scripted server) gets its rounds only after the first model's fail."""

from __future__ import annotations

from pathlib import Path

from engine_support import FIX_EDIT, WRONG_EDIT, journal_records
from testkit.scripted_llm import ScriptedLLM

REFLECTION = {"hypothesis": "add subtracts", "file": "calc.py", "change": "return a + b", "confidence": "low"}


def _fallback_config(project: Path, url: str, monkeypatch) -> None:
    """The fallback endpoint in the user's config file: a project file may not choose an endpoint."""
    user = project.parent / "user-config.toml"
    user.write_text(f'[fallback]\nbase_url = "{url}"\nmodel = "big-model"\ntemperature = 0.1\n')
    monkeypatch.setenv("AGENTLS_CONFIG", str(user))


def test_the_fallback_codes_only_after_the_first_models_rounds_fail(project: Path, scripted_llm, run_fix, monkeypatch):
    scripted_llm.default("coder", WRONG_EDIT)
    scripted_llm.default("reflector", REFLECTION)
    with ScriptedLLM() as big:
        big.add("coder", FIX_EDIT)
        _fallback_config(project, big.base_url, monkeypatch)

        run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "2")

        assert run.code == 0 and run.json["status"] == "fixed", run.stderr
        assert run.json["iterations"] == 3, "two rounds of the first model, then the fallback's first round"
        assert len(scripted_llm.requests_for("coder")) == 2 and len(big.requests_for("coder")) == 1
        assert big.requests_for("coder")[0]["model"] == "big-model"
        assert big.requests_for("coder")[0]["temperature"] == 0.1, "its own temperature, not the warmed-up one"
        assert big.requests_for("reflector") == [] and big.requests_for("planner") == []
    records = journal_records(project, run.json["run_id"])
    calls = [r["role"] for r in records if r["type"] == "llm_call"]
    assert calls.index("fallback") > max(i for i, role in enumerate(calls) if role == "coder"), "only after"
    escalation = next(r for r in records if r["type"] == "escalate")
    assert escalation["model"] == "big-model" and escalation["after_rounds"] == 2
    end = next(r for r in records if r["type"] == "run_end")
    fallback = end["usage_by_role"]["fallback"]
    assert fallback["llm_calls"] == 1 and fallback["prompt_tokens"] > 0 and fallback["completion_tokens"] > 0
    for key in ("prompt_tokens", "completion_tokens", "llm_calls"):
        assert end["usage"][key] == sum(u[key] for u in end["usage_by_role"].values()), key


def test_the_fallback_is_not_asked_when_the_first_model_fixes_it(project: Path, scripted_llm, run_fix, monkeypatch):
    scripted_llm.add("coder", FIX_EDIT)
    with ScriptedLLM() as big:
        _fallback_config(project, big.base_url, monkeypatch)

        run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

        assert run.json["status"] == "fixed" and big.requests == []
    end = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "run_end")
    assert "fallback" not in end["usage_by_role"]


def test_unfixed_by_both_ends_unfixed_after_both_budgets(project: Path, scripted_llm, run_fix, monkeypatch):
    scripted_llm.default("coder", WRONG_EDIT)
    scripted_llm.default("reflector", REFLECTION)
    scripted_llm.default("planner", {"approach": "again", "subtasks": [
        {"id": "t1", "description": "fix add in calc.py", "priority": 5, "dependencies": [], "files": ["calc.py"]}]})
    with ScriptedLLM() as big:
        big.default("coder", WRONG_EDIT)
        _fallback_config(project, big.base_url, monkeypatch)

        run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1")

        assert run.json["status"] == "unfixed" and run.json["iterations"] == 2, run.stderr
        assert len(scripted_llm.requests_for("coder")) == 1 and len(big.requests_for("coder")) == 1
