"""Gen-tests end to end on the real sandbox with the real openai client against the scripted server."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from gentests_support import PLANTED_LINE, measure_coverage

from agent_core import events
from agent_core.events import NullHooks, PhaseEvent
from agent_core.gentests.run import run_gen_tests
from agent_core.llm.base import StructuredOutputError
from agent_core.models import RunRequest
from agent_core.settings import Settings
from agent_core.workspace.changeset import apply_change_set

COVERAGE_RULE = {
    "enabled": False
}  # these tests are about the loop and the coverage rule (mutation: test_gentests_mutation)


def _user_text(body: dict) -> str:
    return body["messages"][-1]["content"]


def _tests(*tests: tuple[str, str]) -> str:
    return json.dumps(
        {"tests": [{"name": n, "code": c, "kind": "pytest", "target": "", "rationale": "r"} for n, c in tests]}
    )


AVERAGE_TESTS = _tests(
    (
        "test_average_documented",
        "from shop import average\n\n\ndef test_average_documented():\n    assert average([2, 4]) == 3.0\n",
    )
)
CLAMP_TESTS = _tests(
    ("test_clamp_low", "from shopp import clamp\n\n\ndef test_clamp_low():\n    assert clamp(-5, 0, 10) == 0\n"),
    (
        "test_clamp_never",
        "from shop import clamp\n\n\ndef test_clamp_never(no_such_fixture):\n    assert clamp(1, 0, 2) == 1\n",
    ),
    (
        "test_clamp_low_again",
        "from shop import clamp\n\n\ndef test_clamp_low_again():\n    assert clamp(-1, 0, 10) == 0\n",
    ),
    ("test_clamp_high", "from shop import clamp\n\n\ndef test_clamp_high():\n    assert clamp(15, 0, 10) == 10\n"),
)
REPAIRED_LOW = _tests(
    ("test_clamp_low", "from shop import clamp\n\n\ndef test_clamp_low():\n    assert clamp(-5, 0, 10) == 0\n")
)
STILL_BROKEN = _tests(
    (
        "test_clamp_never",
        "from shop import clamp\n\n\ndef test_clamp_never(other_missing):\n    assert clamp(1, 0, 2) == 1\n",
    )
)


def _tester(body: dict) -> str:
    text = _user_text(body)
    if "does not run" in text:
        return REPAIRED_LOW if "def test_clamp_low(" in text else STILL_BROKEN
    if "Code under test (average)" in text:
        return AVERAGE_TESTS
    if "Code under test (clamp)" in text:
        return CLAMP_TESTS
    raise AssertionError(f"unexpected tester prompt: {text[:200]}")


async def test_keep_repair_drop_and_suspected_bug(scripted_llm, shop_workspace: Path):
    scripted_llm.default("tester", _tester)
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1, mutation=COVERAGE_RULE)
    hooks = NullHooks()
    request = RunRequest(kind="gen_tests", workspace=shop_workspace, target_file="shop.py", run_id="t1")
    result = await run_gen_tests(request, settings, hooks)

    assert result.status == "ok", result.error
    assert result.gen_tests is not None
    extra = result.gen_tests.model_dump()  # the typed summary, as the plain data the CLI's --json prints
    assert (extra["tests_written"], extra["tests_kept"], extra["tests_dropped"]) == (5, 3, 2)
    reasons = {d["test"]: d["reason"] for d in extra["dropped"]}
    assert reasons["test_clamp_low_again"] == "adds no line or branch coverage"
    assert reasons["test_clamp_never"].startswith("never ran correctly")
    assert extra["suspected_bugs"] == [
        {
            "test": "tests/test_shop.py::test_average_documented",
            "file": "shop.py",
            "line": PLANTED_LINE,
            "message": extra["suspected_bugs"][0]["message"],
        }
    ]
    assert "average" in extra["suspected_bugs"][0]["message"]

    # the repaired test is kept; the change set creates the file; the bug test is marked
    assert result.change_set.files == ["tests/test_shop.py"]
    text = result.change_set.changes[0].new
    assert result.change_set.changes[0].kind == "create"
    assert "from shop import clamp" in text and "shopp" not in text
    for name in ("test_average_documented", "test_clamp_low", "test_clamp_high"):
        assert f"def {name}(" in text
    assert "test_clamp_never" not in text and "test_clamp_low_again" not in text
    marker_line = text.splitlines()[text.splitlines().index("def test_average_documented():") - 1]
    assert marker_line.startswith("# agentls: suspected bug: average")
    assert len(scripted_llm.requests_for("tester")) == 4  # 2 writes + 2 repairs; the docstring judged the bug

    # the report locates the failure in the final test file and the event reaches the front end
    failure = result.report.failures[0]
    assert text.splitlines()[failure.line - 1].strip() == "assert average([2, 4]) == 3.0"
    assert any(isinstance(e, events.TestReportEvent) for e in hooks.events)
    assert {e.phase for e in hooks.events if isinstance(e, PhaseEvent)} >= {"planning", "coding", "testing"}

    # coverage: before 0 (no tests), after measured independently on the applied file
    apply_change_set(shop_workspace, result.change_set)
    assert extra["coverage"]["before"] == 0.0
    assert extra["coverage"]["after"] == measure_coverage(shop_workspace, ["tests/test_shop.py"], "shop.py")
    assert extra["coverage"]["after"] > 50


EXISTING = '''"""Hand-written tests of the shop."""
import pytest

from shop import clamp


@pytest.fixture
def bounds():
    return (0, 10)


def test_clamp_inside(bounds):
    assert clamp(5, *bounds) == 5
'''


async def test_existing_test_file_is_extended_and_coverage_is_reported(scripted_llm, shop_workspace: Path, tmp_path):
    (shop_workspace / "tests").mkdir()
    (shop_workspace / "tests" / "test_shop.py").write_text(EXISTING)
    pristine = tmp_path / "pristine"
    shutil.copytree(shop_workspace, pristine)
    scripted_llm.add(
        "tester",
        _tests(
            (
                "test_clamp_inside",
                "from shop import clamp\n\n\ndef test_clamp_inside():\n    assert clamp(15, 0, 10) == 10\n",
            ),
        ),
    )
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1, mutation=COVERAGE_RULE)
    request = RunRequest(kind="gen_tests", workspace=shop_workspace, target_file="shop.py", target_symbol="clamp")
    result = await run_gen_tests(request, settings, NullHooks())

    assert result.status == "ok", result.error
    assert result.gen_tests and result.gen_tests.tests_kept == 1
    change = result.change_set.changes[0]
    assert (change.path, change.kind, change.original) == ("tests/test_shop.py", "MODIFY".lower(), EXISTING)
    assert change.new.startswith(EXISTING.rstrip("\n"))  # nothing of the existing file moved or changed
    assert "def test_clamp_inside_2():" in change.new  # the clashing name was made unique
    assert (shop_workspace / "tests" / "test_shop.py").read_text() == EXISTING  # the workspace is untouched

    before = measure_coverage(pristine, ["tests/test_shop.py"], "shop.py")
    apply_change_set(shop_workspace, result.change_set)
    after = measure_coverage(shop_workspace, ["tests/test_shop.py"], "shop.py")
    assert result.gen_tests and result.gen_tests.coverage.model_dump() == {"before": before, "after": after}
    assert after > before


async def test_a_tester_answer_without_tests_is_drawn_again_before_the_run_gives_up(scripted_llm, shop_workspace: Path):
    """dateutil's easter: the bundled model's answer lacked "tests" twice (the answer and its repair request)."""
    shapeless = json.dumps({"name": "test_clamp", "code": "def test_clamp(): ..."})
    for _ in range(2):
        scripted_llm.add("tester", shapeless)
    scripted_llm.add("tester", _tests(
        ("test_clamp_high", "from shop import clamp\n\n\ndef test_clamp_high():\n    assert clamp(15, 0, 10) == 10\n"),
    ))
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1, mutation=COVERAGE_RULE)
    request = RunRequest(kind="gen_tests", workspace=shop_workspace, target_file="shop.py", target_symbol="clamp")
    result = await run_gen_tests(request, settings, NullHooks())

    assert result.status == "ok", result.error
    assert result.gen_tests and result.gen_tests.tests_kept == 1
    temperatures = [r.get("temperature") for r in scripted_llm.requests_for("tester")]
    assert temperatures[2] == 0.7 and temperatures[0] != 0.7  # the third request is the second draw


async def test_when_every_draw_is_shapeless_the_run_ends_in_the_model_error(scripted_llm, shop_workspace: Path):
    """The error the engine reports as the run's (status error, exit 1 in the CLI), after both draws."""
    scripted_llm.default("tester", json.dumps({"name": "test_clamp"}))
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1, mutation=COVERAGE_RULE)
    request = RunRequest(kind="gen_tests", workspace=shop_workspace, target_file="shop.py", target_symbol="clamp")
    with pytest.raises(StructuredOutputError, match="TesterOutput"):
        await run_gen_tests(request, settings, NullHooks())
    assert len(scripted_llm.requests_for("tester")) == 4  # two draws, each with its repair request
