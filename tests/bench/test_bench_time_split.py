"""bench/time_split.py on the journals of real `agentls fix` runs (scripted endpoint, real sandbox)."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from agent_core.cli import main
from bench.time_split import PARTS, journals, split
from testkit.project_support import CALC, FIX_EDIT, make_project


@pytest.fixture(autouse=True)
def _isolated(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "OPENAI_API_KEY"):
        monkeypatch.delenv(name, raising=False)


def _fix(project: Path, base_url: str) -> dict:
    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(io.StringIO()):
        code = main(["fix", str(project), "--base-url", base_url, "--json"])
    assert code == 0
    return json.loads(out.getvalue().strip().splitlines()[-1])


def test_a_model_run_splits_into_parts_that_add_up_with_the_model_calls_timed(tmp_path: Path, scripted_llm):
    project = make_project(tmp_path / "model", CALC)  # the search is off in the tests (tests/conftest.py)
    scripted_llm.default("coder", FIX_EDIT)
    scripted_llm.add("explainer", "The sum subtracted. It adds now.")
    out = _fix(project, scripted_llm.base_url)
    (journal,) = journals(project)
    s = split(journal)
    assert s is not None and s.status == out["status"] == "fixed"
    assert s.llm_calls == out["usage"]["llm_calls"] == 2, "the coder's and the explainer's calls"
    records = [json.loads(line) for line in journal.read_text().splitlines()]
    timed = sum(r["duration_s"] for r in records if r["type"] == "llm_call")
    assert s.parts["model"] == pytest.approx(timed) and timed > 0
    assert s.parts["baseline"] > 0 and s.parts["tests"] > 0, "the baseline and the candidate's test run"
    assert s.parts["localize"] > 0, "localization runs for the coder even with the search off"
    assert sum(s.parts[p] for p in PARTS) == pytest.approx(s.total)


def test_a_search_run_has_localization_and_search_and_no_model(tmp_path: Path, scripted_llm, monkeypatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")  # tests/conftest.py turns the search off for the model's tests
    project = make_project(tmp_path / "search", CALC)
    out = _fix(project, scripted_llm.base_url)
    (journal,) = journals(project)
    s = split(journal)
    assert s is not None and out["status"] == "fixed" and scripted_llm.requests == []
    assert s.llm_calls == 0 and s.parts["model"] == 0
    assert s.parts["localize"] > 0 and s.parts["search"] > 0
    assert sum(s.parts[p] for p in PARTS) == pytest.approx(s.total)
    assert journals(tmp_path) == [journal], "a directory of workspaces is searched too"
