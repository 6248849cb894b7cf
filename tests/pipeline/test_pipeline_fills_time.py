"""The model's fills under a run's time budget: given the time a model round after them could not finish in.

A scripted endpoint writes a token every 0.1 s (a slow local model, measured by the client's pace); the fills'
first end passes while their first hole is being filled, and the fix is the second hole's fill. With a run
deadline that leaves no time for a round at that pace, the fills go on and find it; with one that leaves time,
they stop where they were told to, and the round gets the rest. Real bubblewrap sandbox.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.pipeline import timebudget
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.timebudget import fills_extension
from agent_core.sandbox.factory import make_sandbox
from agent_core.search.driver.interleave import FillsEnd, ModelBatches
from agent_core.search.driver.localizing import SearchDeps
from agent_core.search.driver.single_edit import find_single_edit
from agent_core.search.infill import INFILL_ACCOUNT, InfillOptions, spread_holes
from agent_core.settings import Settings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace
from testkit.scripted_faults import Fault

SOURCES = {
    "label.py": 'def label(name, formal):\n    if formal:\n        name = "Dr. " + name\n'
                '    return "Hello " + name\n',
    "test_label.py": "from label import label\n\n\n"
                     'def test_formal():\n    assert label("Ann", True) == "Hello, Dr. Ann!"\n',
}
RIGHT = '    return "Hello, " + name + "!"'  # wrong at line 3 (the first hole), the fix at line 4
TOKEN_S = 0.1  # the scripted endpoint's time per written token
FIRST_END_S = 1.5  # the fills' end, as infill_deadline would set it, from the search's start: after the first
# sample's answer (about 0.9 s), during the second's
SUITE_S = 0.5


def _search(root: Path, base_url: str, run_s: float) -> tuple[Any, dict]:
    """The search of SOURCES (in `root`) with no candidate of its own, the model's fills of line 3's hole, then
    line 4's, ending FIRST_END_S after the start, extended by `fills_extension` for a run ending `run_s` after it:
    the winner and the fills' figures."""
    for rel, text in SOURCES.items():
        (root / rel).write_text(text)
    settings = Settings.model_validate({"test_command": "pytest -q", "sandbox": {"backend": "bubblewrap"},
                                        "base_url": base_url, "max_retries": 0})
    sources = {"label.py": SOURCES["label.py"]}
    first = [h for h in spread_holes([("label.py", 3)], sources) if h.kind == "line"]

    async def go() -> tuple[Any, dict]:
        client = OpenAIChatClient(settings)
        try:
            with ShadowWorkspace(root) as shadow:
                deps = cast(SearchDeps, SimpleNamespace(settings=settings, sandbox=make_sandbox(settings.sandbox),
                                                        shadow=shadow, run_tests=run_tests))
                began = time.monotonic()
                run = cast(RunDeps, SimpleNamespace(deadline=began + run_s, llm=client))
                model = ModelBatches(client, first, sources, InfillOptions(samples=2, deadline=began + FIRST_END_S),
                                     later=[("label.py", 4)], step=1, extend=fills_extension(run, SUITE_S))
                winner, _, _ = await find_single_edit(deps, ["test_label.py::test_formal"], [], deadline=began,
                                                      more=model, more_until=began + FIRST_END_S, rivals=False)
            return winner, model.figures(winner)
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.fixture
def slow_endpoint(scripted_llm, monkeypatch: pytest.MonkeyPatch):
    """The scripted endpoint, writing RIGHT a token every TOKEN_S; the pace is told after one answered call."""
    monkeypatch.setenv("AGENTLS_FIM", "tokens")
    monkeypatch.setattr(timebudget, "PACE_CALLS", 1)
    scripted_llm.default(INFILL_ACCOUNT, Fault.slow(TOKEN_S, RIGHT + "\n"))
    return scripted_llm


@pytest.mark.e2e  # a real sandbox
def test_a_round_too_slow_to_finish_gives_its_time_to_the_fills(tmp_path: Path, slow_endpoint):
    """30 s left: a round at 0.1 s a token takes 40 s and more, so the fills go on to the run's end less the
    confirmation's time, and the second hole's fill is the fix."""
    winner, figures = _search(tmp_path, slow_endpoint.base_url, 30.0)

    assert winner is not None and winner.line == 4 and winner.text == RIGHT, figures
    kept = timebudget.CONFIRM_RUNS * SUITE_S + timebudget.CONFIRM_S
    assert figures["extended_s"] == pytest.approx(30.0 - kept - FIRST_END_S, abs=0.2), figures
    assert figures["per_hole"][0]["hole"] == "line 3 (line)" and "line 4" in figures["won"], figures


@pytest.mark.e2e  # a real sandbox
def test_a_round_that_can_finish_keeps_its_time(tmp_path: Path, slow_endpoint):
    """300 s left: the round fits at that pace, so the fills stop at their first end, during the first hole (its
    sample is abandoned) and line 4's hole is never asked."""
    winner, figures = _search(tmp_path, slow_endpoint.base_url, 300.0)

    assert winner is None and figures["extended_s"] == 0, figures
    prompts = [r["prompt"] for r in slow_endpoint.requests_for(INFILL_ACCOUNT)]
    assert prompts and not any('name = "Dr. " + name' in p for p in prompts), "line 3's hole alone (line 4's shows it)"


def test_the_end_waits_for_the_pace_then_stands():
    """`extend` is asked until it can tell; its answer stands, and an end is never moved earlier."""
    answers: list[float | None] = [None, None, 50.0, 90.0]
    end = FillsEnd(10.0, lambda at: answers.pop(0))
    assert end.at == 10.0 and end.at == 10.0 and end.extended_s == 0.0, "not told yet"
    assert end.at == 50.0 and end.at == 50.0 and end.extended_s == 40.0, "told once; not asked again"
    assert answers == [90.0]
    assert FillsEnd(10.0, lambda at: 5.0).at == 10.0, "never earlier"
    assert FillsEnd(None, lambda at: 50.0).at is None, "no end of its own: nothing to move"


class Paced:
    """A client whose fills wrote a token a second (no round fits anywhere here), once `calls` were answered."""

    def __init__(self, calls: int = 100) -> None:
        self.calls = calls

    def pace(self, account: str, least: int = 1) -> float | None:
        return 1.0 if self.calls >= least else None


def test_without_a_time_budget_or_with_no_room_the_end_stays():
    """No run deadline: the end stands as it is. A confirmation's time longer than what is left: it stands too."""

    no_budget = fills_extension(cast(RunDeps, SimpleNamespace(deadline=None, llm=Paced())), 1.0)
    assert no_budget(100.0) == 100.0
    tight = fills_extension(cast(RunDeps, SimpleNamespace(deadline=110.0, llm=Paced())), 10.0)
    assert tight(100.0) == 100.0, "a suite and CONFIRM_S kept for the confirmation, 10 s left"
    roomy = fills_extension(cast(RunDeps, SimpleNamespace(deadline=200.0, llm=Paced())), 10.0)
    assert roomy(100.0) == 200.0 - (timebudget.CONFIRM_RUNS * 10.0 + timebudget.CONFIRM_S)


def test_the_pace_is_waited_for_until_the_end_then_one_answer_is_enough_and_none_keeps_the_end():
    now = time.monotonic()
    deadline = now + 300.0  # 200 s after the end: a round of 400 tokens at a second each does not fit
    last = deadline - (timebudget.CONFIRM_RUNS * 1.0 + timebudget.CONFIRM_S)  # a suite of 1 s confirms the last

    def extend(calls: int) -> Any:
        return fills_extension(cast(RunDeps, SimpleNamespace(deadline=deadline, llm=Paced(calls))), 1.0)

    assert extend(timebudget.PACE_CALLS - 1)(now + 100.0) is None, "before the end: PACE_CALLS answers needed"
    assert extend(timebudget.PACE_CALLS)(now + 100.0) == last
    assert extend(1)(now - 1.0) == last, "at the end, one answer tells"
    assert extend(0)(now - 1.0) == now - 1.0, "at the end with no answer: the end stands"
