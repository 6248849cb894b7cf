"""Failure memory across runs: a failure and its fix from an earlier run reach the reflector later."""

from __future__ import annotations

from pathlib import Path

from agent_core.agents.explainer.prompt import SYSTEM as EXPLAINER_SYSTEM
from testkit.runs_support import FIX_AFTER_WRONG, REFLECTION, WRONG_EDIT, prompt_of


def _script_failed_attempt_then_fix(scripted_llm) -> None:
    scripted_llm.add("coder", WRONG_EDIT)
    scripted_llm.add("reflector", REFLECTION)
    scripted_llm.add("coder", FIX_AFTER_WRONG)
    scripted_llm.add("explainer", "add multiplied; it adds now.")


def _reflections(scripted_llm) -> list[dict]:
    """The reflector's requests (the explainer's are named as its own)."""
    reflections = scripted_llm.requests_for("reflector")
    assert all(r["messages"][0]["content"] != EXPLAINER_SYSTEM for r in reflections)
    return reflections


def test_earlier_failure_and_its_fix_reach_the_reflector(project: Path, tmp_path: Path, scripted_llm, cli,
                                                         monkeypatch):
    memory = tmp_path / "memory" / "agentls.sqlite"
    monkeypatch.setenv("AGENTLS_MEMORY__PATH", str(memory))  # a project file may not move the memory outside it

    _script_failed_attempt_then_fix(scripted_llm)
    first = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json")
    assert first.code == 0 and first.json["status"] == "fixed", first.stderr
    assert memory.is_file(), "the memory lives where settings memory.path says"
    earlier = prompt_of(_reflections(scripted_llm)[0])
    assert "fixed by" not in earlier, "nothing was resolved before the first run"

    _script_failed_attempt_then_fix(scripted_llm)
    second = cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json")
    assert second.code == 0 and second.json["status"] == "fixed", second.stderr

    later = prompt_of(_reflections(scripted_llm)[1])
    past = later.split("Similar past failures:", 1)[1]
    assert "AssertionError: assert 6 == 5" in past, "the earlier run's failure is recalled"
    assert "fixed by:" in past and "+    return a + b" in past, "with the fix that resolved it"
