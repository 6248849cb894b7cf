"""Localize and search before asking: `agentls fix` on real projects, a real sandbox, the scripted endpoint."""

from __future__ import annotations

import asyncio
import contextlib
import io
import json
import shutil
from pathlib import Path

import pytest

from agent_core.cli import main
from agent_core.engine import Engine
from agent_core.events import NullHooks
from agent_core.models import RunRequest
from agent_core.settings import load_settings
from engine_support import journal_records, make_project, snapshot

pytestmark = pytest.mark.e2e  # every test here runs a real sandbox

FAST = "[search]\nmutant_timeout_s = 2\n"

GRADES = {
    "grades.py": (
        'def passed(scores, mark):\n    """How many scores reach the pass mark."""\n'
        "    return len([s for s in scores if s > mark])\n\n\ndef best(scores):\n    return max(scores)\n"
    ),
    "test_grades.py": (
        "from grades import best, passed\n\n\ndef test_on_the_mark_passes():\n"
        "    assert passed([50, 60, 70], 60) == 2\n\n\ndef test_below():\n    assert passed([10], 60) == 0\n\n\n"
        "def test_exactly():\n    assert passed([60, 60], 60) == 2\n\n\ndef test_best():\n"
        "    assert best([1, 3, 2]) == 3\n"
    ),
    ".agentls.toml": FAST,
}
TRIANGLE = {
    "shapes.py": (
        'def triangle(n):\n    """1 + 2 + ... + n."""\n    total = 0\n    for i in range(1, n):\n'
        "        total += i\n    return total\n"
    ),
    "test_shapes.py": (
        "from shapes import triangle\n\n\ndef test_one():\n    assert triangle(1) == 1\n\n\n"
        "def test_four():\n    assert triangle(4) == 10\n\n\ndef test_zero():\n    assert triangle(0) == 0\n"
    ),
    ".agentls.toml": FAST,
}
GREETING = {
    "hello.py": 'def greet(name):\n    return "Hello " + name\n',
    "test_hello.py": 'from hello import greet\n\n\ndef test_greet():\n    assert greet("Ann") == "Hello, Ann!"\n',
    ".agentls.toml": FAST,
}
GREETING_FIX = {
    "edits": [
        {"path": "hello.py", "search": '    return "Hello " + name', "replace": '    return "Hello, " + name + "!"'}
    ],
    "explanation": "comma and bang",
}
HALVINGS = {  # `n //= 2` -> `n //= 1` (tried before the fix, `2` -> `1` a line below) never ends
    "halve.py": (
        'def steps(n):\n    """How many halvings take n down to 1."""\n    count = 0\n    while n > 1:\n'
        "        n //= 2\n        count += 2\n    return count\n"
    ),
    "test_halve.py": (
        "from halve import steps\n\n\ndef test_eight():\n    assert steps(8) == 3\n\n\n"
        "def test_one():\n    assert steps(1) == 0\n\n\ndef test_seven():\n    assert steps(7) == 2\n"
    ),
    ".agentls.toml": FAST,
}


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")


def _search_record(root: Path, run_id: str) -> dict:
    return next(r for r in journal_records(root, run_id) if r["type"] == "search")


def _changed_lines(root: Path, run_id: str) -> list[str]:
    diff = (root / ".agentls" / "runs" / run_id / "changes.diff").read_text()
    return [line for line in diff.splitlines() if line[:1] in "+-" and line[:3] not in ("+++", "---")]


def _trace(root: Path) -> str:
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["trace", "--workspace", str(root)]) == 0
    return out.getvalue()


@pytest.mark.parametrize(
    "files, path, before, after",
    [
        (
            GRADES,
            "grades.py",
            "    return len([s for s in scores if s > mark])",
            "    return len([s for s in scores if s >= mark])",
        ),
        (TRIANGLE, "shapes.py", "    for i in range(1, n):", "    for i in range(1, n + 1):"),
    ],
)
def test_a_one_token_bug_is_fixed_by_the_search_with_no_model_call(
    tmp_path: Path, scripted_llm, run_fix, files, path, before, after
):
    project = make_project(tmp_path / "proj", files)
    before_files = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed" and out["usage"]["llm_calls"] == 0 and out["files_changed"] == [path]
    assert scripted_llm.requests == []
    assert snapshot(project) == before_files, "without --apply nothing is written"
    summary = json.loads((project / ".agentls" / "runs" / out["run_id"] / "summary.json").read_text())
    assert summary["found_by"] == out["found_by"] == "search" and "single-edit mutant" in summary["summary"]
    assert _changed_lines(project, out["run_id"]) == [f"-{before}", f"+{after}"], "the diff is the one-token change"
    found = _search_record(project, out["run_id"])["found"]
    assert (found["file"], found["before"], found["after"]) == (path, before, after)
    localize = next(r for r in journal_records(project, out["run_id"]) if r["type"] == "localize")
    assert localize["evidence"] == "coverage" and localize["suspects"][0]["file"] == path
    function = localize["suspects"][0]["function"]
    assert function in ("passed", "triangle") and localize["called"] == [f"{path}:{function}"], \
        "the failing tests call the function by name"
    trace = _trace(project)
    assert "localized from coverage" in trace and "candidate for review" in trace and after.strip() in trace
    assert f"{function} ({path}:1-" in trace and "called by a failing test" in trace


def test_the_applied_search_fix_reaches_the_project(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", GRADES)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert "if s >= mark" in (project / "grades.py").read_text()
    assert (project / "test_grades.py").read_text() == GRADES["test_grades.py"]


def test_a_bug_no_single_edit_fixes_goes_to_the_model_with_the_shadow_untouched(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", GREETING)
    scripted_llm.add("coder", GREETING_FIX)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    out = run.json
    assert out["status"] == "fixed" and out["iterations"] == 1
    assert [r["role"] for r in scripted_llm.requests if r["role"] != "explainer"] == ["coder"]
    assert '"Hello " + name' in scripted_llm.requests_for("coder")[0]["messages"][-1]["content"], (
        "the coder sees the original line, not a mutant"
    )
    search = _search_record(project, out["run_id"])
    assert search["found"] is None and search["tried"] == search["mutants"] > 0
    summary = json.loads((project / ".agentls" / "runs" / out["run_id"] / "summary.json").read_text())
    assert summary["found_by"] == out["found_by"] == "model"
    assert _changed_lines(project, out["run_id"]) == [
        '-    return "Hello " + name',
        '+    return "Hello, " + name + "!"',
    ], "only the model's edit: the search left nothing behind"


def test_a_mutant_that_never_ends_is_cut_by_the_per_mutant_bound(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", {**HALVINGS, ".agentls.toml": ""})  # the setting's 5 s

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and scripted_llm.requests == []
    search = _search_record(project, run.json["run_id"])
    assert search["timeouts"] >= 1, "the looping mutant was tried and stopped"
    assert search["mutant_timeout_s"] < search["mutant_cap_s"] == 5.0, \
        ("stopped at what the quick tests need (driver/mutant_bound.py), not at the setting", search)
    assert search["found"]["after"] == "        count += 1"
    reports = [r for r in journal_records(project, run.json["run_id"]) if r["type"] == "test_report"]
    assert not any(r["report"]["timed_out"] for r in reports), "no sandbox run hit the run's timeout"


SLOW = {
    "quota.py": "def reached(used, quota):\n    return used > quota\n",
    "test_quota.py": (
        "import time\n\nfrom quota import reached\n\n\ndef test_exactly_at_the_quota():\n"
        "    time.sleep(2)  # a slow test: an integration test, a big fixture\n    assert reached(3, 3)\n\n\n"
        "def test_below():\n    assert not reached(2, 3)\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 1\n",
}


def test_a_slow_failing_test_gets_a_per_mutant_bound_from_its_own_time(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", SLOW)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and scripted_llm.requests == []
    search = _search_record(project, run.json["run_id"])
    assert search["mutant_timeout_s"] >= 7, "3 x the 2 s test (plus a second), not the 1 s setting"
    assert search["found"]["after"] == "    return used >= quota" and search["timeouts"] == 0


HANGING = {  # `n -= 1` written `n += 1`: every test with n > 0 loops forever
    "countdown.py": (
        'def countdown(n):\n    """n + (n - 1) + ... + 1."""\n    total = 0\n    while n > 0:\n'
        "        total += n\n        n += 1\n    return total\n"
    ),
    "test_countdown.py": (
        "from countdown import countdown\n\n\ndef test_zero():\n    assert countdown(0) == 0\n\n\n"
        "def test_one():\n    assert countdown(1) == 1\n\n\ndef test_three():\n    assert countdown(3) == 6\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\nbudget_s = 60\n[sandbox]\ntest_timeout_s = 2\n",
}


def test_failing_tests_that_hang_do_not_set_the_per_mutant_bound(tmp_path: Path, scripted_llm, run_fix):
    """A failing test cut by the localizing bound looped: its time is the bound's, not a slow test's need
    (two hanging tests made the bound 61 s, and one mutant that still hung ate the whole 60 s budget)."""
    project = make_project(tmp_path / "proj", HANGING)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and scripted_llm.requests == []
    search = _search_record(project, run.json["run_id"])
    # the setting (twice it with the covering tests), not 3 x the hung tests' 2 x 10 s + 1
    assert search["mutant_timeout_s"] <= 4, search
    assert search["found"]["after"] == "        n -= 1"


def test_the_search_can_be_turned_off_and_localization_still_reaches_the_state(
    tmp_path: Path, scripted_llm, run_fix, monkeypatch
):
    monkeypatch.delenv("AGENTLS_SEARCH")  # the environment wins over files: let the file speak
    project = make_project(tmp_path / "proj", {**GRADES, ".agentls.toml": "[search]\nenabled = false\n"})
    scripted_llm.add(
        "coder",
        {
            "edits": [{"path": "grades.py", "search": "if s > mark", "replace": "if s >= mark"}],
            "explanation": "reach the mark",
        },
    )

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert len(scripted_llm.requests_for("coder")) == 1
    types = [r["type"] for r in journal_records(project, run.json["run_id"])]
    assert "localize" in types and "search" not in types


def test_without_pytest_there_is_no_coverage_and_the_run_goes_on_to_the_model(tmp_path: Path, scripted_llm, run_fix):
    check = 'from hello import greet\n\nassert greet("Ann") == "Hello, Ann!", greet("Ann")\n'
    project = make_project(tmp_path / "proj", {**GREETING, "check.py": check})
    scripted_llm.add(
        "planner",
        {
            "approach": "fix greet",
            "subtasks": [
                {
                    "id": "t1",
                    "description": "fix greet in hello.py",
                    "priority": 5,
                    "dependencies": [],
                    "files": ["hello.py"],
                }
            ],
        },
    )
    scripted_llm.add("coder", GREETING_FIX)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--test-cmd", "python check.py")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert len(scripted_llm.requests_for("coder")) == 1
    localize = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "localize")
    assert localize["evidence"] == "traceback" and "error" not in localize


def test_a_typed_goal_still_searches_and_fixes_with_no_model_call(tmp_path: Path, scripted_llm, run_fix):
    """The goal is more than "the tests pass", but a fix run whose tests fail is searched whatever it says: the
    scripted endpoint has no answer queued, so any model call would show (and fail the run)."""
    project = make_project(tmp_path / "proj", GRADES)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--goal",
                  "the tests in test_grades.py fail; fix the bug in grades.py")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert run.json["usage"]["llm_calls"] == 0 and scripted_llm.requests == []
    found = _search_record(project, run.json["run_id"])["found"]
    assert found["after"] == "    return len([s for s in scores if s >= mark])"


def test_a_typed_goal_reaches_the_model_when_the_search_finds_nothing(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", GREETING)
    goal = "greet with a comma and an exclamation mark; keep the concatenation"
    scripted_llm.default("planner", {"approach": "fix greet", "subtasks": [
        {"id": "t1", "description": "comma and bang", "priority": 5, "dependencies": [], "files": ["hello.py"]}]})
    scripted_llm.add("coder", GREETING_FIX)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--goal", goal)

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    search = _search_record(project, run.json["run_id"])
    assert search["found"] is None and search["tried"] > 0, "searched first"
    first = json.dumps(scripted_llm.requests[0]["messages"])
    assert "keep the concatenation" in first, "then the goal reached the model"


def test_a_goal_that_asks_to_change_the_tests_is_not_searched(tmp_path: Path, scripted_llm, run_fix):
    """The failing tests are then not the specification: a code edit that makes them pass answers another question."""
    project = make_project(tmp_path / "proj", GRADES)
    scripted_llm.default("planner", {"approach": "edit the test", "subtasks": [
        {"id": "t1", "description": "expect 1", "priority": 5, "dependencies": [], "files": ["test_grades.py"]}]})
    edit = {"path": "test_grades.py", "search": "    assert passed([50, 60, 70], 60) == 2",
            "replace": "    assert passed([50, 60, 70], 60) == 1"}
    scripted_llm.add("coder", {"edits": [edit], "explanation": "the mark itself fails"})

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1", "--goal",
                  "a score on the mark fails: update the test in test_grades.py to expect 1")

    types = [r["type"] for r in journal_records(project, run.json["run_id"])]
    assert "localize" in types and "search" not in types, "localized for the model, not searched"
    assert scripted_llm.requests_for("coder"), "the model was asked"


def test_an_editors_plan_and_fix_on_a_diagnostic_is_searched(tmp_path: Path, scripted_llm):
    """The language server's request: no typed goal, a diagnostic pointing at the failing test."""
    project = make_project(tmp_path / "proj", GRADES)
    request = RunRequest(
        kind="fix", workspace=project, target_file="test_grades.py", diagnostics=["test_exactly failed: assert 0 == 2"]
    )

    result = asyncio.run(Engine(load_settings(project, {"base_url": scripted_llm.base_url})).run(request, NullHooks()))

    assert result.status == "fixed" and result.found_by == "search" and scripted_llm.requests == []
    assert result.change_set.files == ["grades.py"]


def test_the_demo_example_is_fixed_by_an_inserted_base_case(tmp_path: Path, scripted_llm, run_fix):
    example = Path(__file__).resolve().parents[2] / "examples" / "digits"
    project = tmp_path / "digits"
    shutil.copytree(example, project, ignore=shutil.ignore_patterns(".agentls", "__pycache__", ".pytest_cache"))

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed", run.stderr
    assert scripted_llm.requests == []
    assert _changed_lines(project, run.json["run_id"]) == ["+    if n < 10:", "+        return n"]


WIDER = {
    "dates.py": (
        "def split(text):\n    return [int(p) for p in text.split('-')]\n\n\n"
        "def later(text):\n    first, second = split(text)\n    if first > second:\n        return first\n"
        "    if second > first:\n        return second\n    return None\n"
    ),
    "test_dates.py": (
        "import pytest\n\nfrom dates import later, split\n\n\n"
        "@pytest.mark.parametrize('n', range(301))\ndef test_split(n):\n    assert split(f'{n}-1') == [n, 1]\n\n\n"
        "def test_later_first():\n    assert later('5-3') == 5\n\n\n"
        "class TestUnusual:\n    @pytest.mark.xfail(reason='words are not dates yet', strict=True)\n"
        "    def test_words(self):\n        assert later('five-three') == 5\n\n"
        "    def test_equal(self):\n        assert later('4-4') == 4\n"
    ),
    ".agentls.toml": FAST,
}


def test_a_failing_test_whose_class_has_no_passing_neighbour_is_localized_with_its_file(
    tmp_path: Path, scripted_llm, run_fix
):
    # a big suite (over 300 tests) is localized on the failing test's class; here that class holds only an
    # expected failure, which tells no line apart, so the test file is run instead
    project = make_project(tmp_path / "proj", WIDER)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and scripted_llm.requests == []
    localize = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "localize")
    assert localize["tests_covered"] > 300, "the whole test file's coverage, not the class's two tests"
    top = localize["suspects"][0]
    assert top["function"] == "later" and 2 not in top["lines"], "split() is run by passing tests too"


def test_a_search_with_nothing_to_try_says_why_in_the_journal(tmp_path: Path, scripted_llm, run_fix):
    """The failing test runs no line of the workspace's code: no suspect, nothing to mutate; the journal says
    so instead of staying silent (a user reading it would otherwise not know whether the search ran)."""
    project = make_project(tmp_path / "proj", {
        "hello.py": 'def greet(name):\n    return "Hello " + name\n',
        "test_sums.py": "def test_sum():\n    assert sum([1, 1]) == 3, 'a sum the code does not make'\n",
        ".agentls.toml": FAST})

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1")

    records = journal_records(project, run.json["run_id"])
    (search,) = [r for r in records if r["type"] == "search"]
    assert search["found"] is None and search["tried"] == 0
    assert search["skipped"] == "no suspicious line in the workspace's code"
