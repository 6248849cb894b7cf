"""`fix` and `gen_tests` over stdio: the pipeline streams progress and stops when cancelled; a diff comes back; the
progress values rise with every notification, across the search's hand-over to the model."""

from __future__ import annotations

from functools import partial
from itertools import pairwise

import anyio
from mcp_support import CALC, server_descendants, until

from testkit.project_support import GREET, script_greet
from testkit.scripted_faults import Fault

PLAN = {"approach": "Fix add.", "subtasks": [{"id": "t1", "description": "make add add in calc.py",
                                             "files": ["calc.py"]}]}
FIX = {"edits": [{"path": "calc.py", "search": "    return a - b\n", "replace": "    return a + b\n"}],
       "explanation": "add must add"}

GENERATED = {"tests": [{
    "name": "test_area_example", "kind": "pytest", "target": "area", "rationale": "an example",
    "code": "from shapes import area\n\n\ndef test_area_example():\n    assert area(3, 4) == 12\n",
}]}


def _script(llm, coder_answer) -> None:
    llm.default("planner", PLAN)
    llm.add("coder", coder_answer)
    llm.default("coder", FIX)
    llm.default("reflector", {"hypothesis": "wrong operator", "file": "calc.py", "change": "use +",
                              "confidence": "high"})


async def test_fix_streams_progress_and_stops_cleanly_when_cancelled_and_gen_tests_returns_a_diff(mcp_session,
                                                                                                scripted_llm):
    _script(scripted_llm, Fault.hang(60))  # the coder's call hangs
    scripted_llm.add("tester", GENERATED)
    files = {**CALC, "shapes.py": "def area(w, h):\n    return w * h\n"}  # no test covers it yet
    async with mcp_session(files, extra_env={"AGENTLS_MUTATION__ENABLED": "false"}) as s:
        async with anyio.create_task_group() as group:
            group.start_soon(partial(s.call, "fix", project=str(s.project), hint="add subtracts"))
            await until(lambda: bool(scripted_llm.requests_for("coder")), timeout=90)
            assert s.pid > 0 and any(s.tmpdir.iterdir()), "the run's shadow copy exists while it waits for the coder"
            group.cancel_scope.cancel()  # the SDK sends notifications/cancelled for the abandoned request
        await until(lambda: not any(s.tmpdir.iterdir()) and server_descendants(s.pid) == [], timeout=30)
        messages = [m or "" for _, _, m in s.progress]
        assert any(m.startswith("planning") for m in messages) and any(m.startswith("coding") for m in messages)
        assert all(total == 100 for _, total, _ in s.progress)
        doubled = [m for m in messages if (parts := m.split(": "))[1:] and parts[1].split()[0] == parts[0]]
        assert doubled == [], "the phase is said once"
        assert (s.project / "calc.py").read_text() == CALC["calc.py"]

        assert "add subtracts" in str(scripted_llm.requests_for("coder")[0]["messages"]), "the hint reached the model"

        generated = await s.call("gen_tests", project=str(s.project), file="shapes.py", target="area")
        data = generated.structured_content
        assert not generated.is_error and data["status"] == "ok", generated.content
        assert "+def test_area_example():" in data["diff"] and data["llm_calls"] == 1, data
        assert "test_area_example" not in "".join(p.read_text() for p in s.project.rglob("*.py")), "never written"


async def test_fix_progress_rises_with_every_notification_across_the_search_to_model_hand_over(mcp_session,
                                                                                               scripted_llm):
    script_greet(scripted_llm)
    async with mcp_session(GREET, extra_env={"AGENTLS_SEARCH": "1"}) as s:
        result = await s.call("fix", project=str(s.project))
    assert not result.is_error and result.structured_content["status"] == "fixed", result.content
    assert len(scripted_llm.requests_for("coder")) == 1, "the search found nothing; the model fixed it"
    messages = [m or "" for _, _, m in s.progress]
    searched = max(i for i, m in enumerate(messages) if m.startswith("testing: trying single-edit fixes"))
    assert any(m.startswith("planning") for m in messages[searched:]), messages
    values = [value for value, _, _ in s.progress]
    assert all(a < b for a, b in pairwise(values)), f"MCP: each progress value higher than the last: {values}"
