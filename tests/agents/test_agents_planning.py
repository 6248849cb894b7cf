"""Plan validation, ordering and the textual pre-plan, as tables."""

from __future__ import annotations

import pytest

from agent_core.agents.planner.schema import PlannedStep, PlannerOutput
from agent_core.agents.planner.validation import PlanError, textual_preplan, validate_plan
from agent_core.models import TestFailure as Failure
from agent_core.models import TestReport as Report


def _plan(*steps: tuple) -> PlannerOutput:
    return PlannerOutput(subtasks=[PlannedStep(id=i, description=f"step {i}", priority=p, dependencies=list(d))
                                   for i, p, d in steps])


@pytest.mark.parametrize(
    "steps, order",
    [
        ([("t1", 3, [])], ["t1"]),
        ([("t1", 1, []), ("t2", 5, []), ("t3", 3, [])], ["t2", "t3", "t1"]),  # priority breaks ties
        ([("t1", 3, ["t2"]), ("t2", 1, [])], ["t2", "t1"]),  # dependencies beat priority
        ([("a", 2, []), ("b", 2, []), ("c", 5, ["a", "b"])], ["a", "b", "c"]),  # plan order among equals
        ([("t1", 1, []), ("t2", 5, ["t1"]), ("t3", 4, [])], ["t3", "t1", "t2"]),
    ],
)
def test_valid_plans_come_back_in_topological_order(steps, order):
    assert [s.id for s in validate_plan(_plan(*steps)).subtasks] == order


@pytest.mark.parametrize(
    "steps, message",
    [
        ([("t1", 3, ["t2"]), ("t2", 3, ["t1"])], "plan has a dependency cycle: t1 -> t2 -> t1"),
        ([("t1", 3, ["t1"])], "plan has a dependency cycle: t1 -> t1"),
        ([("t1", 3, []), ("t2", 3, ["t3"]), ("t3", 3, ["t4"]), ("t4", 3, ["t2"])],
         "plan has a dependency cycle: t2 -> t3 -> t4 -> t2"),
        ([("t1", 3, ["t9"])], "plan has unknown dependencies: t1 -> t9"),
        ([("t1", 3, []), ("t1", 2, [])], "plan has duplicate step ids: t1"),
        ([("t1", 0, [])], "priority must be 1-5, got: t1 (0)"),
        ([("t1", 6, [])], "priority must be 1-5, got: t1 (6)"),
        ([], "plan has no steps"),
    ],
)
def test_invalid_plans_are_explained(steps, message):
    with pytest.raises(PlanError) as info:
        validate_plan(_plan(*steps))
    assert str(info.value) == message


def test_integer_ids_from_a_small_model_are_accepted():
    out = PlannerOutput.model_validate({"subtasks": [{"id": 1, "description": "a", "dependencies": []},
                                                     {"id": 2, "description": "b", "dependencies": [1]}]})
    assert [s.id for s in validate_plan(out).subtasks] == ["1", "2"]


FAILING = Report(failed=1, exit_code=1, failures=[Failure(
    nodeid="tests/test_a.py::test_x", file="tests/test_a.py", line=4, message="assert 5 == 6",
    source_file="pkg/a.py", source_line=3)])


@pytest.mark.parametrize(
    "goal, report, one_step",
    [
        (None, FAILING, True),
        ("fix the failing test", FAILING, True),
        ("Please fix the tests", FAILING, True),
        ("make the tests pass", FAILING, True),
        ("Add a --verbose flag", FAILING, False),
        (None, Report(passed=3, exit_code=0), False),
        (None, None, False),
    ],
)
def test_textual_preplan(goal, report, one_step):
    plan = textual_preplan(goal, report)
    assert (plan is not None) == one_step
    if plan:
        assert len(plan.subtasks) == 1 and plan.subtasks[0].files == ["pkg/a.py"]
        assert "tests/test_a.py::test_x" in plan.subtasks[0].description
