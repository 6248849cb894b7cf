"""`agentls fix --json` carries the diff, the journal and the tokens (with their cost when priced); `--set`
reaches the run; a token budget stops a run as budget_spent with no request after it; `agentls test` on a
project without tests exits 2 with a hint. Real engine, real sandbox, the scripted OpenAI-compatible server."""

from __future__ import annotations

import contextlib
import io
import json
from pathlib import Path

import pytest

from agent_core.cli import main

PROJECT = {
    "calc.py": "def add(a, b):\n    return a - b\n",
    "test_calc.py": "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}
FIX = {"edits": [{"path": "calc.py", "search": "return a - b", "replace": "return a + b"}],
       "explanation": "add subtracted"}
WRONG = {"edits": [{"path": "calc.py", "search": "return a - b", "replace": "return a * b"}],
         "explanation": "try a product"}


@pytest.fixture
def project(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path / "config"))  # no user config file of the machine
    for name in ("AGENTLS_BASE_URL", "OPENAI_BASE_URL", "AGENTLS_MODEL", "AGENTLS_TOKEN_BUDGET", "NO_COLOR"):
        monkeypatch.delenv(name, raising=False)
    root = tmp_path / "proj"
    root.mkdir()
    for rel, text in PROJECT.items():
        (root / rel).write_text(text)
    return root


def _cli(*args: str) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        code = main(list(args))
    return code, out.getvalue(), err.getvalue()


def test_fix_json_has_diff_journal_usage_cost_and_set_reaches_the_run(project: Path, scripted_llm) -> None:
    scripted_llm.add("coder", FIX)
    scripted_llm.add("explainer", "add subtracted; it adds now.")
    code, out, err = _cli("fix", str(project), "--base-url", scripted_llm.base_url, "--model", "scripted", "--json",
                          "--set", "samples=1", "--set", 'prices={"scripted": [1000000, 2000000]}')
    summary = json.loads(out.strip().splitlines()[-1])
    assert (code, summary["status"]) == (0, "fixed"), err
    assert "-    return a - b\n+    return a + b\n" in summary["diff"]
    journal = Path(summary["journal"])
    assert journal == project.resolve() / ".agentls" / "runs" / summary["run_id"]
    assert (journal / "journal.jsonl").is_file()
    recorded = json.loads((journal / "summary.json").read_text())  # the RunResult: typed, no free-form dict
    assert recorded["found_by"] == summary["found_by"] == "model" and "extra" not in recorded
    assert recorded["details"]["plan_source"] == "textual" and recorded["details"]["verdict"] is None
    assert "runId" not in out
    usage = summary["usage"]
    assert usage["llm_calls"] == 2 and usage["total_tokens"] == usage["prompt_tokens"] + usage["completion_tokens"] > 0
    # the price is 1 USD per prompt token and 2 per completion token: the cost is exact
    assert usage["cost_usd"] == usage["prompt_tokens"] + 2 * usage["completion_tokens"]
    assert "n" not in scripted_llm.requests_for("coder")[0], "--set samples=1: one answer asked, no n"
    assert f"{usage['total_tokens']:,} tokens" in err and f"${usage['cost_usd']:.4f}" in err
    assert summary["settings_warnings"] == []


def test_unpriced_model_has_no_cost_and_bad_set_is_bad_input(project: Path, scripted_llm) -> None:
    scripted_llm.add("coder", FIX)
    scripted_llm.add("explainer", "fixed")
    code, out, _ = _cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json",
                        "--set", 'prices={"another-model": [1, 1]}')
    summary = json.loads(out.strip().splitlines()[-1])
    assert code == 0 and summary["usage"]["cost_usd"] is None and summary["usage"]["total_tokens"] > 0
    code, out, err = _cli("fix", str(project), "--json", "--set", "max_iteration=2")
    failed = json.loads(out.strip().splitlines()[-1])
    assert code == 2 and "max_iteration" in failed["error"] and failed["found_by"] is None, err
    assert _cli("fix", str(project), "--set", "no-equals-sign")[0] == 2


def test_token_budget_stops_the_run_with_no_request_after_it(project: Path, scripted_llm) -> None:
    scripted_llm.default("coder", WRONG)  # never fixes: only the budget can end the rounds early
    scripted_llm.default("reflector", {"hypothesis": "wrong operator", "confidence": 0.5})
    budget = 60
    code, out, err = _cli("fix", str(project), "--base-url", scripted_llm.base_url, "--json",
                          "--set", f"token_budget={budget}", "--set", "samples=1")
    summary = json.loads(out.strip().splitlines()[-1])
    assert (code, summary["status"]) == (1, "budget_spent"), err
    assert len(scripted_llm.requests) == 1, "the first call spent the budget: no request after it"
    assert scripted_llm.requests[0]["max_tokens"] <= budget, "the one call is capped to what the budget leaves"
    assert summary["usage"]["total_tokens"] >= budget and "token budget" in summary["error"]
    assert "budget_spent" in err and not (project / "calc.py").read_text().count("*")


def test_test_without_tests_exits_2_with_a_hint(tmp_path: Path) -> None:
    root = tmp_path / "empty"
    root.mkdir()
    (root / "calc.py").write_text("def add(a, b):\n    return a + b\n")
    code, out, err = _cli("test", str(root), "--json")
    summary = json.loads(out.strip().splitlines()[-1])
    assert code == 2 and summary["status"] == "error" and "collected no tests" in summary["error"], err
    assert "collected no tests" in err and "test_command" in err
