"""The goal text: what the editor pointed at (file, symbol, a selection) reaches the model."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from langgraph.checkpoint.memory import InMemorySaver

from agent_core.engine import Engine
from agent_core.events import NullHooks
from agent_core.models import Position, RunRequest, Span
from agent_core.pipeline.goal import default_goal, selected_text
from agent_core.settings import load_settings
from engine_support import FIX_EDIT

TEXT = "def add(a, b):\n    total = a - b\n    return total\n"


def _span(l1: int, c1: int, l2: int, c2: int) -> Span:
    return Span(start=Position(line=l1, character=c1), end=Position(line=l2, character=c2))


@pytest.mark.parametrize("span, expected", [
    (_span(1, 4, 1, 17), "total = a - b"),
    (_span(1, 0, 3, 0), "total = a - b\nreturn total"),  # whole lines, dedented together
    (_span(1, 2, 2, 16), "total = a - b\nreturn total"),  # from inside the indentation: the whole line
    (_span(1, 12, 1, 17), "a - b"),
    (_span(0, 0, 99, 0), TEXT.strip("\n")),  # past the end: to the end
    (_span(1, 4, 1, 4), ""),  # a cursor, not a selection
    (_span(2, 5, 1, 0), ""),  # reversed
    (_span(0, 14, 1, 4), ""),  # only whitespace
])
def test_selected_text(span: Span, expected: str):
    assert selected_text(TEXT, span) == expected


def test_a_long_selection_is_cut():
    text = "x = [" + ", ".join(str(i) for i in range(500)) + "]\n"
    picked = selected_text(text, _span(0, 0, 1, 0), limit=40)
    assert picked.endswith(" ...") and len(picked) <= 44 and picked.startswith("x = [0, 1, 2")


def test_goal_names_file_symbol_and_quotes_the_selection():
    request = RunRequest(kind="fix", workspace=Path("/w"), target_file="calc.py", target_symbol="add",
                         target_span=_span(1, 4, 1, 17), diagnostics=["test_add: assert -1 == 5"])
    assert default_goal(request, TEXT) == (
        "Fix the failing tests. (file: calc.py, symbol: add)\nSelected there:\n    total = a - b\n"
        "Diagnostics:\n- test_add: assert -1 == 5")
    assert default_goal(request.model_copy(update={"target_span": _span(1, 4, 1, 4)}), TEXT) == (
        "Fix the failing tests. (file: calc.py, symbol: add)\nDiagnostics:\n- test_add: assert -1 == 5")


async def test_the_selection_in_an_unsaved_buffer_reaches_the_coder(project: Path, scripted_llm):
    scripted_llm.add("coder", FIX_EDIT)
    unsaved = "def add(a, b):\n    return a - b  # suspicious\n\n\ndef mul(a, b):\n    return a * b\n"
    engine = Engine(load_settings(project, {"base_url": scripted_llm.base_url}), checkpointer=InMemorySaver())

    result = await engine.run(RunRequest(
        kind="fix", workspace=project, target_file="calc.py", target_symbol="add", target_span=_span(1, 4, 1, 30),
        overlays={"calc.py": unsaved}), NullHooks())

    assert result.status == "fixed", result.error
    prompt = json.loads(json.dumps(scripted_llm.requests_for("coder")[0]["messages"]))
    assert ("Where the user is looking: (file: calc.py, symbol: add)\nSelected there:\n"
            "    return a - b  # suspicious\n") in "\n".join(m["content"] for m in prompt)
