"""Two green candidates told apart (driver/distinguish.py): `agentls fix` on real projects, a real sandbox, the scripted
endpoint with no answer queued (zero tokens). A second edit of the fixed function that passes every test too is
reported with a generated input on which the two disagree; a fix no other edit matches reports no rival; a fix
that drops code of its function gives way to a rival that keeps all of it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from agent_core.quickfix import find_quick_fix
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import SandboxSettings, SearchSettings, Settings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import journal_records, make_project

pytestmark = pytest.mark.e2e  # every test here runs a real sandbox

FAST = "[search]\nmutant_timeout_s = 2\n"

SIGNS = {  # `or` -> `and` is the fix; `a > 0` -> `a == 0` passes these tests too, and differs where `a` is 0
    "signs.py": "def both_positive(a, b):\n    return a > 0 or b > 0\n",
    "test_signs.py": (
        "from signs import both_positive\n\n\ndef test_both():\n    assert both_positive(1, 2)\n\n\n"
        "def test_neither():\n    assert not both_positive(-1, -2)\n\n\n"
        "def test_one():\n    assert not both_positive(5, -1)\n"
    ),
    ".agentls.toml": FAST,
}
MOVED = {  # the keyword given to the wrong call: deleting it passes these tests, moving it to `sorted` is the fix
    "rank.py": 'def by_length(words):\n    """The distinct words, shortest first."""\n'
               "    return list(sorted(set(words, key=len)))\n",
    "test_rank.py": (
        "from rank import by_length\n\n\ndef test_by_length():\n"
        "    assert by_length(['ccc', 'a', 'bb', 'a']) == ['a', 'bb', 'ccc']\n\n\n"
        "def test_empty():\n    assert by_length([]) == []\n"
    ),
    ".agentls.toml": FAST,
}
DOUBLE = {  # one edit passes: `3` -> `2`
    "double.py": "def double(x):\n    return x * 3\n",
    "test_double.py": (
        "from double import double\n\n\ndef test_two():\n    assert double(2) == 4\n\n\n"
        "def test_five():\n    assert double(5) == 10\n\n\ndef test_zero():\n    assert double(0) == 0\n"
    ),
    ".agentls.toml": FAST,
}


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    monkeypatch.setenv("AGENTLS_SEARCH__RIVALS", "1")  # off in the other tests (tests/conftest.py)


def _fix(tmp_path: Path, scripted_llm, run_fix, files: dict[str, str]) -> tuple[Path, dict, dict]:
    project = make_project(tmp_path / "proj", files)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    return project, search, run.json


def test_a_second_green_edit_is_shown_with_an_input_they_differ_on(tmp_path: Path, scripted_llm, run_fix):
    project, search, result = _fix(tmp_path, scripted_llm, run_fix, SIGNS)

    assert search["found"]["description"] == "`or` -> `and`"
    rival = search["rival"]
    assert rival["function"] == "both_positive" and rival["line"] == 2
    assert "`or` -> `and`" not in rival["description"]
    call = rival["differs_on"]
    assert call and call.startswith("both_positive(")
    namespace: dict = {}
    exec((project / "signs.py").read_text(), namespace)  # the applied fix gives what the journal says it gives
    assert repr(eval(call, namespace)) == rival["winner_gives"]
    assert rival["rival_gives"] != rival["winner_gives"]
    assert f"they differ on `{call}`: this fix gives {rival['winner_gives']}" in result["explanation"]
    summary = json.loads((project / ".agentls" / "runs" / result["run_id"] / "summary.json").read_text())
    assert summary["found_by"] == result["found_by"] == "search"
    assert not (project / ".agentls" / "differ").exists(), "the comparison's folder is removed"


def test_a_fix_no_other_edit_matches_has_no_rival(tmp_path: Path, scripted_llm, run_fix):
    project, search, result = _fix(tmp_path, scripted_llm, run_fix, DOUBLE)

    assert search["found"]["description"] == "`3` -> `2`"
    assert search["rival_tried"] >= 1, "the function's other candidates were tried"
    assert "rival" not in search and "rival_error" not in search
    assert "Another edit" not in result["explanation"]
    assert (project / "double.py").read_text() == "def double(x):\n    return x * 2\n"


def test_a_fix_that_drops_an_argument_gives_way_to_one_that_moves_it(tmp_path: Path, scripted_llm, run_fix):
    project, search, result = _fix(tmp_path, scripted_llm, run_fix, MOVED)

    assert (project / "rank.py").read_text().endswith("    return list(sorted(set(words), key=len))\n")
    assert search["found"]["line"] == 3 and "key=len" in search["found"]["description"]
    rival = search["rival"]
    assert rival["given_up"] == ["`key=`", "`len`"] and rival["description"] == "`set(words, key=len)` -> `set(words)`"
    call = rival["differs_on"]
    assert call and call.startswith("by_length(["), "an item of the tests' list varied tells the two apart"
    namespace: dict = {}
    exec((project / "rank.py").read_text(), namespace)  # the applied fix gives what the journal says it gives
    assert repr(eval(call, namespace)) == rival["winner_gives"] != rival["rival_gives"]
    assert ("Another edit also passes the tests: `set(words, key=len)` -> `set(words)`, but it drops `key=`, `len` "
            "from the function; this fix keeps them and was chosen in its place") in result["explanation"]


def test_the_editors_background_quick_fix_shows_the_rival_in_its_preview(tmp_path: Path):
    root = make_project(tmp_path / "ws", SIGNS)
    settings = Settings(sandbox=SandboxSettings(backend="bubblewrap", timeout_s=120),
                        search=SearchSettings(enabled=True, rivals=True, mutant_timeout_s=2))
    with ShadowWorkspace(root, {}) as shadow:
        report = asyncio.run(run_tests(make_sandbox(settings), shadow.root, "pytest", 120))
    assert report.failed == 1

    outcome = asyncio.run(find_quick_fix(settings, root, {}, report, nice=False))

    assert outcome.fix is not None and outcome.fix.change == "`a > 0 or b > 0` -> `a > 0 and b > 0`", outcome.stats
    rival = outcome.stats["rival"]
    assert outcome.fix.rival.startswith(f"Another edit also passes the tests: {rival['description']}; they differ on")
    assert f"this fix gives {rival['winner_gives']}, the other {rival['rival_gives']}." in outcome.fix.rival
