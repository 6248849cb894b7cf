"""The model's fills are made while the search's own driver runs (neither waits for the other), and go next to
the line where one of the search's candidates passed the failing tests but the whole suite refused it.

Real bubblewrap sandbox: each of the search's candidates is a driver run of its own (HOT_CHUNK 1); stand-in
models whose holes take seconds each show what runs beside what.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from types import SimpleNamespace
from typing import Any, cast

import pytest

from agent_core import models
from agent_core.llm.openai_client import OpenAIChatClient
from agent_core.sandbox.factory import make_sandbox
from agent_core.search.candidate import Mutant
from agent_core.search.driver import single_edit
from agent_core.search.driver.interleave import FillsEnd, HoleQueue, ModelBatches
from agent_core.search.driver.localizing import SearchDeps
from agent_core.search.driver.mutant_bound import MutantBound
from agent_core.search.driver.single_edit import find_single_edit
from agent_core.search.front import SearchStats
from agent_core.search.infill import INFILL_ACCOUNT, INFILL_TIER, InfillOptions, spread_holes
from agent_core.settings import Settings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace

SOURCES = {
    "square.py": "def square(x):\n    return x * 2\n",
    "test_square.py": "from square import square\n\n\ndef test_five():\n"
                      "    assert square(2) == 4 and square(5) == 25\n",
}
MODEL_TURN_S = 12.0
OWN_BUDGET_S = 10.0


class StubModel:
    """What the driver asks of a ModelBatches besides its holes: whether it is done for good (when it has no hole
    now: yes), noting what was tried and preferred (nothing)."""

    done = True
    end = FillsEnd(None)  # no end of its own: the search's `more_until`

    def count_tried(self, mutants: Any) -> None:
        pass

    def prefer(self, results: Any) -> bool:
        return False


class SlowModel(StubModel):
    """A model whose one turn takes MODEL_TURN_S and brings no candidate; then it has no more holes."""

    def __init__(self) -> None:
        self.calls: list[float] = []
        self.untils: list[float | None] = []

    async def __call__(self, until: float | None = None) -> list[Mutant] | None:
        self.calls.append(time.monotonic())
        self.untils.append(until)
        if len(self.calls) > 1:
            return None
        await asyncio.sleep(MODEL_TURN_S)
        return []


def _square_search(tmp_path: Path, mutants: list[Mutant], model: Any, own_s: float, more_s: float = 120.0,
                   **options: Any) -> tuple[float, tuple[Mutant | None, Any, dict]]:
    """The square project in `tmp_path`, searched with `mutants` and the `model`'s turns (the search's own deadline
    `own_s` from its start, the model's `more_s`; `options` for find_single_edit): its start, and what it found."""
    for rel, text in SOURCES.items():
        (tmp_path / rel).write_text(text)
    settings = Settings.model_validate({"test_command": "pytest -q", "sandbox": {"backend": "bubblewrap"}})

    async def go() -> tuple[float, tuple[Mutant | None, Any, dict]]:
        with ShadowWorkspace(tmp_path) as shadow:
            deps = cast(SearchDeps, SimpleNamespace(settings=settings, sandbox=make_sandbox(settings.sandbox),
                                                    shadow=shadow, run_tests=run_tests))
            began = time.monotonic()
            return began, await find_single_edit(deps, ["test_square.py::test_five"], mutants,
                                                 deadline=began + own_s, more=cast(ModelBatches, model),
                                                 more_until=began + more_s, **options)

    return asyncio.run(go())


@pytest.mark.e2e  # a real sandbox
def test_the_search_s_own_candidates_do_not_wait_for_the_model(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """The model's first hole takes longer than the search's whole deadline; the search's own right candidate,
    second in its own driver run, wins while that hole is still being filled (the model begins at once here)."""
    monkeypatch.setattr(single_edit, "HOT_CHUNK", 1)
    monkeypatch.setattr(single_edit, "LIKELY_RANKS", 0)
    mutants = [Mutant("square.py", 2, "    return x * 3", "2 -> 3"),
               Mutant("square.py", 2, "    return x ** 2", "* -> **")]
    model = SlowModel()

    began, (winner, report, stats) = _square_search(tmp_path, mutants, model, OWN_BUDGET_S)

    assert winner is not None and winner.text == "    return x ** 2", stats
    assert report is not None and report.ok and stats["tried"] == 2
    assert time.monotonic() - began < MODEL_TURN_S, "found before the model's first hole was done"
    assert len(model.calls) == 1 and model.calls[0] - began < 1.0, "the model began at once, beside the driver"
    assert model.untils == [None], "a hole is filled to its own end"


class EndlessModel(StubModel):
    """A model whose holes take a second each and bring no candidate, and which never runs out of them."""

    def __init__(self) -> None:
        self.calls: list[float] = []

    async def __call__(self, until: float | None = None) -> list[Mutant] | None:
        self.calls.append(time.monotonic())
        await asyncio.sleep(1.0)
        return []


@pytest.mark.e2e  # a real sandbox
def test_the_search_s_next_step_comes_before_the_model_goes_on_alone(tmp_path: Path):
    """Two edits (driver/pairs.py, `then`) get the search's own deadline once its candidates are done, while the
    model fills holes beside it; once the pair wins, the model's filling stops."""
    mutants = [Mutant("square.py", 2, "    return x * 3", "2 -> 3")]
    paired = Mutant("square.py", 2, "    return x ** 2", "two edits")
    model = EndlessModel()
    steps: list[tuple[float, float]] = []

    async def then(own_until: float) -> tuple[Mutant, Any]:
        steps.append((time.monotonic(), own_until))
        await asyncio.sleep(2.5)  # a second edit's search, while the model goes on beside it
        return paired, "the pair's report"

    began, (winner, report, stats) = _square_search(tmp_path, mutants, model, OWN_BUDGET_S, then=then)
    ended = time.monotonic()

    assert winner is paired and report == "the pair's report", stats
    assert len(steps) == 1, steps
    at, own_until = steps[0]
    assert at - began < OWN_BUDGET_S and own_until == began + OWN_BUDGET_S, "within the search's own deadline"
    assert len(model.calls) >= 2 and model.calls[1] < ended, "the model filled holes beside the search"
    time.sleep(1.5)
    assert all(call < ended for call in model.calls), "no hole was asked for after the search ended"


def _driver_run_ends(monkeypatch: pytest.MonkeyPatch) -> list[float]:
    """The times the search's driver runs end, appended as each does."""
    ends: list[float] = []
    real = single_edit.try_mutants

    async def timed(*args: Any, **kwargs: Any) -> Any:
        out = await real(*args, **kwargs)
        ends.append(time.monotonic())
        return out

    monkeypatch.setattr(single_edit, "try_mutants", timed)
    return ends


@pytest.mark.e2e  # a real sandbox
def test_the_model_begins_once_the_search_s_likeliest_candidates_are_tried(tmp_path: Path,
                                                                              monkeypatch: pytest.MonkeyPatch):
    """Where the search's own fixes are (its first LIKELY_RANKS candidates, 2 here) it runs alone: a fix it finds
    there costs no model call; past them the model fills holes beside its next driver runs."""
    monkeypatch.setattr(single_edit, "HOT_CHUNK", 1)
    monkeypatch.setattr(single_edit, "LIKELY_RANKS", 2)
    ends = _driver_run_ends(monkeypatch)
    mutants = [Mutant("square.py", 2, f"    return x * {n}", f"2 -> {n}") for n in (3, 4, 5, 6)]
    mutants.append(Mutant("square.py", 2, "    return x ** 2", "* -> **"))
    model = EndlessModel()

    _, (winner, report, stats) = _square_search(tmp_path, mutants, model, 120.0, rivals=False)

    assert winner is not None and winner.text == "    return x ** 2" and stats["tried"] == 5, stats
    assert model.calls and ends[1] <= model.calls[0] < ends[2], ("beside the third driver run", ends, model.calls)
    assert len(model.calls) >= 2, "then beside the driver's next runs"

    early = EndlessModel()
    (tmp_path / "early").mkdir()
    _, (first, _, _) = _square_search(tmp_path / "early", mutants[-1:], early, 120.0, rivals=False)
    assert first is not None and early.calls == [], "fixed among the likeliest: no model call"


class QuickModel(StubModel):
    """A model whose first hole's candidate (the fix) is ready after half a second; then it has no more."""

    def __init__(self, fix: Mutant) -> None:
        self.fix, self.calls = fix, 0

    async def __call__(self, until: float | None = None) -> list[Mutant] | None:
        self.calls += 1
        if self.calls > 1:
            return None
        await asyncio.sleep(0.5)
        return [self.fix]


@pytest.mark.e2e  # a real sandbox
def test_a_fill_ready_during_a_driver_run_is_tried_after_it(tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Six wrong candidates of the search's own, a driver run each; the model's fix is ready during the first run
    and tried right after it, not after the search's own candidates are done."""
    monkeypatch.setattr(single_edit, "HOT_CHUNK", 1)
    monkeypatch.setattr(single_edit, "LIKELY_RANKS", 0)
    mutants = [Mutant("square.py", 2, f"    return x * {n}", f"2 -> {n}") for n in (3, 4, 5, 6, 7, 8)]
    fix = Mutant("square.py", 2, "    return x ** 2", "model infill at line 2 (line): return x ** 2", INFILL_TIER)

    _, (winner, report, stats) = _square_search(tmp_path, mutants, QuickModel(fix), 120.0, rivals=False)

    assert winner is fix and report is not None and report.ok, stats
    assert stats["tried"] <= 3, ("the fill came after the first driver run or the second", stats)


LABELS = {
    "label.py": 'def label(name, formal):\n    if formal:\n        name = "Dr. " + name\n'
                '    return "Hello " + name\n',
    "test_label.py": "from label import label\n\n\n"
                     'def test_formal():\n    assert label("Ann", True) == "Hello, Dr. Ann!"\n\n\n'
                     'def test_informal():\n    text = label("Bo", False)\n'
                     '    assert text.startswith("Hello") and "Bo" in text\n',
}
RIGHT = '    return "Hello, " + name + "!"'


def _labels_search(root: Path, base_url: str, own: list[Mutant], line: int) -> tuple[Mutant | None, Any, dict, dict]:
    """find_single_edit on LABELS (written to `root`) for test_formal: the search's `own` candidates, and the
    model's fills (2 samples, from the endpoint at `base_url`) of the line hole of label.py's `line`. The winner,
    its report, the search's figures and the fills'."""
    for rel, text in LABELS.items():
        (root / rel).write_text(text)
    settings = Settings.model_validate({"test_command": "pytest -q", "sandbox": {"backend": "bubblewrap"},
                                        "base_url": base_url, "max_retries": 0})
    sources = {"label.py": LABELS["label.py"]}
    holes = [h for h in spread_holes([("label.py", line)], sources) if h.kind == "line"]

    async def go() -> tuple[Mutant | None, Any, dict, dict]:
        client = OpenAIChatClient(settings)
        try:
            model = ModelBatches(client, holes, sources, InfillOptions(samples=2))
            with ShadowWorkspace(root) as shadow:
                deps = cast(SearchDeps, SimpleNamespace(settings=settings, sandbox=make_sandbox(settings.sandbox),
                                                        shadow=shadow, run_tests=run_tests))
                began = time.monotonic()
                winner, report, stats = await find_single_edit(
                    deps, ["test_label.py::test_formal"], own, deadline=began + 60.0, more=model,
                    more_until=began + 120.0, rivals=False)
                return winner, report, stats, model.figures(winner)
        finally:
            await client.aclose()

    return asyncio.run(go())


@pytest.mark.e2e  # a real sandbox
def test_a_line_whose_candidate_passed_the_failing_test_but_was_refused_gets_the_next_hole(
        tmp_path: Path, scripted_llm, monkeypatch: pytest.MonkeyPatch):
    """The spectrum ranks line 3 first (only the failing test runs it) and the holes asked start there; the
    search's candidate at line 4 passes the failing test and breaks the other one. The model's first hole is
    line 4's own, cut although the ranking had not reached it, and its fill wins."""
    monkeypatch.setattr(single_edit, "HOT_CHUNK", 1)
    monkeypatch.setenv("AGENTLS_FIM", "tokens")
    refused = Mutant("label.py", 4, '    return "Hello, Dr. Ann!"', "a constant", tier=0)
    scripted_llm.default(INFILL_ACCOUNT, RIGHT + "\n")

    winner, report, stats, figures = _labels_search(tmp_path, scripted_llm.base_url, [refused], 3)

    assert stats["passed_failing"] == 2, "the search's candidate passed the failing test (refused), then the fill"
    assert winner is not None and winner.line == 4 and winner.text == RIGHT, (stats, figures)
    assert report is not None and report.ok
    first = scripted_llm.requests_for(INFILL_ACCOUNT)[0]["prompt"]
    assert 'name = "Dr. " + name' in first and first.endswith('    # buggy line: return "Hello " + name\n'
                                                             "<|fim_suffix|><|fim_middle|>"), "line 4's hole first"
    assert figures["promoted"] == 2 and figures["per_hole"][0]["won"], figures


def test_the_preferred_line_s_own_and_statement_holes_go_next_and_no_hole_is_asked_twice():
    sources = {"label.py": LABELS["label.py"]}
    queue = HoleQueue(spread_holes([("label.py", 3), ("label.py", 4)], sources), sources)
    order = iter(queue)
    first, second = next(order), next(order)
    assert [(first.first, first.kind), (second.first, second.kind)] == [(3, "shown"), (3, "line")]
    queue.prefer([("label.py", 3), ("label.py", 2)])  # line 3's own holes were asked already
    asked = next(order)
    assert (asked.first, asked.last, asked.kind) == (2, 2, "shown"), "the `if` line 2's own hole, cut now"
    queue.prefer([("label.py", 4)])
    assert [(h.first, h.kind) for h in queue.pending[:2]] == [(4, "shown"), (4, "line")], \
        "moved up from further down"
    assert len({(h.first, h.last, h.kind) for h in queue.pending}) == len(queue.pending), "each hole once"
    assert [(h.first, h.kind) for h in queue.promoted] == [(2, "shown"), (2, "line"), (2, "and"), (4, "shown"),
                                                           (4, "line")], \
        "a condition's `and` clause is promoted with its line"


def test_once_the_first_lines_holes_are_asked_the_next_lines_are_cut_as_many_at_a_time():
    sources = {"label.py": LABELS["label.py"]}
    alone = HoleQueue(spread_holes([("label.py", 3)], sources), sources)
    assert {h.first for h in alone} == {2, 3, 4} and alone.pop() is None, "without `later`, the holes run out"

    queue = HoleQueue(spread_holes([("label.py", 3)], sources), sources,
                      later=[("label.py", 4), ("label.py", 2), ("label.py", 1)], step=2)
    first_round = len(queue.pending)
    queue.prefer([("label.py", 4)])  # line 4's own holes were promoted (and asked) before the later lines come
    asked = list(queue)
    assert [(h.first, h.kind) for h in asked[:2]] == [(4, "shown"), (4, "line")], "the promoted holes first"
    assert (asked[2].first, asked[2].kind) == (3, "shown"), "then the first lines' own holes"
    cut_later = asked[len(queue.promoted) + first_round:]
    assert queue.rounds == 2 and cut_later, "lines 4 and 2 in one round, line 1 in the next"
    assert {h.first for h in cut_later if h.kind == "line"} == {2, 1}, "line 4's own hole was not asked again"
    assert len({(h.first, h.last, h.kind, h.label) for h in asked}) == len(asked), "each hole once"
    assert queue.pop() is None and not queue.later


@pytest.mark.e2e  # a real sandbox
def test_a_fill_at_a_line_past_the_first_ones_fixes_once_their_holes_are_asked(
        tmp_path: Path, scripted_llm, monkeypatch: pytest.MonkeyPatch):
    """The first round's hole is line 3's own; the answer there returns early with the wrong text. The fills go on
    at line 4, the ranking's next line, whose own hole's fill is the fix."""
    for rel, text in LABELS.items():
        (tmp_path / rel).write_text(text)
    monkeypatch.setenv("AGENTLS_FIM", "tokens")
    settings = Settings.model_validate({"test_command": "pytest -q", "sandbox": {"backend": "bubblewrap"},
                                        "base_url": scripted_llm.base_url, "max_retries": 0})
    sources = {"label.py": LABELS["label.py"]}
    scripted_llm.default(INFILL_ACCOUNT, RIGHT + "\n")

    async def go() -> tuple[Mutant | None, Any, dict]:
        client = OpenAIChatClient(settings)
        try:
            first = [h for h in spread_holes([("label.py", 3)], sources) if h.kind == "line"]
            model = ModelBatches(client, first, sources, InfillOptions(samples=2), later=[("label.py", 4)], step=1)
            with ShadowWorkspace(tmp_path) as shadow:
                deps = cast(SearchDeps, SimpleNamespace(settings=settings, sandbox=make_sandbox(settings.sandbox),
                                                        shadow=shadow, run_tests=run_tests))
                began = time.monotonic()
                winner, report, _ = await find_single_edit(
                    deps, ["test_label.py::test_formal"], [], deadline=began + 60.0, more=model,
                    more_until=began + 120.0, rivals=False)
                assert report is not None and report.ok
                return winner, model.figures(winner), model.tried
        finally:
            await client.aclose()

    winner, figures, tried = asyncio.run(go())

    assert winner is not None and winner.line == 4 and winner.text == RIGHT, figures
    assert figures["rounds"] == 1, figures
    won = [hole for hole in figures["per_hole"] if hole["won"]]
    assert len(won) == 1 and "line 4" in figures["won"], figures
    assert figures["per_hole"][0]["hole"] == "line 3 (line)" and tried.get(0) == 1, \
        ("line 3's hole was asked and its fill tried first", figures)


@pytest.mark.e2e  # a real sandbox
def test_the_model_begins_after_likely_s_when_the_search_s_likeliest_candidates_take_longer(
        tmp_path: Path, monkeypatch: pytest.MonkeyPatch):
    """Each of the search's own candidates takes 0.6 s (a slow test) and all six are one driver run: the model
    does not wait for LIKELY_RANKS of them, it begins LIKELY_S (1 s here) after the search did, beside that run."""
    monkeypatch.setattr(single_edit, "LIKELY_RANKS", 100)
    monkeypatch.setattr(single_edit, "LIKELY_S", 1.0)
    ends = _driver_run_ends(monkeypatch)
    mutants = [Mutant("square.py", 2, f"    import time; time.sleep(0.6); return x * {n}", f"2 -> {n}")
               for n in (3, 4, 5, 6, 7, 8)]
    model = EndlessModel()

    began, (winner, _, stats) = _square_search(tmp_path, mutants, model, 10.0, more_s=12.0, rivals=False)

    assert winner is None and stats["tried"] == 6, stats
    assert model.calls, "the model was asked"
    assert 0.9 <= model.calls[0] - began < ends[0] - began, ("after LIKELY_S, during the first driver run",
                                                             model.calls[0] - began, ends[0] - began)


@pytest.mark.e2e  # a real sandbox
def test_a_hole_s_candidates_after_one_the_whole_suite_refused_are_still_tried(tmp_path: Path, scripted_llm,
                                                                               monkeypatch: pytest.MonkeyPatch):
    """A driver run stops at the first candidate that passes the failing tests. The hole's first candidate does
    and breaks the other test; the whole suite refuses it, and the hole's second candidate, the fix, is tried in
    the next driver run (it used to be dropped with the rest of the batch)."""
    monkeypatch.setenv("AGENTLS_FIM", "tokens")
    scripted_llm.add(INFILL_ACCOUNT, '    return "Hello, Dr. Ann!"\n')  # passes test_formal, breaks test_informal
    scripted_llm.default(INFILL_ACCOUNT, RIGHT + "\n")

    winner, report, stats, figures = _labels_search(tmp_path, scripted_llm.base_url, [], 4)

    assert winner is not None and winner.text == RIGHT, (stats, figures)
    assert report is not None and report.ok
    assert stats["passed_failing"] == 2, "the refused candidate, then the fix"
    (hole,) = figures["per_hole"]
    assert hole["kept"] == hole["tried"] == 2 and hole["won"], hole


@pytest.mark.e2e  # a real sandbox
def test_a_test_that_refused_one_candidate_is_run_by_the_next_ones_before_any_whole_suite_run(tmp_path: Path):
    """Two candidates pass the failing test and break the same other test; the first costs a whole-suite run that
    refuses it, the second fails that test in the driver (single_edit.REFUSING_TESTS) and costs none; the fix
    after them is verified."""
    for rel, text in LABELS.items():
        (tmp_path / rel).write_text(text)
    settings = Settings.model_validate({"test_command": "pytest -q", "sandbox": {"backend": "bubblewrap"}})
    broken = [Mutant("label.py", 4, '    return "Hello, Dr. Ann!"', "a constant"),
              Mutant("label.py", 4, '    return "Hello, " + "Dr. Ann" + "!"', "another constant")]
    fix = Mutant("label.py", 4, RIGHT, "the fix")

    async def go() -> tuple[Mutant | None, Any, dict]:
        with ShadowWorkspace(tmp_path) as shadow:
            deps = cast(SearchDeps, SimpleNamespace(settings=settings, sandbox=make_sandbox(settings.sandbox),
                                                    shadow=shadow, run_tests=run_tests))
            return await find_single_edit(deps, ["test_label.py::test_formal"], [*broken, fix],
                                          deadline=time.monotonic() + 60.0, rivals=False)

    winner, report, stats = asyncio.run(go())

    assert winner is fix and report is not None and report.ok, stats
    assert stats["passed_failing"] == 2, ("the first constant and the fix; the second failed in the driver", stats)
    assert stats["refusing_tests"] == 1 and stats["tried"] == 3, stats
    assert SearchStats.of(stats).as_dict()["refusing_tests"] == 1, "the journal's `search` record takes the figure"


def test_only_tests_that_passed_before_are_run_as_refusing_ones_the_latest_kept():
    baseline = models.TestReport(failed=1, outcomes={"t.py::test_fails": "failed", "t.py::test_was_broken": "failed",
                                              **{f"t.py::test_{n}": "passed" for n in range(8)}})
    trial = single_edit._Trial(cast(SearchDeps, None), ["t.py::test_fails"], baseline, None, MutantBound(1.0), {})
    assert trial._tests() is None, "nothing refused yet: the failing tests alone"
    trial._refused(["t.py::test_fails", "t.py::test_was_broken", "(test session)", "t.py::test_new", "t.py::test_0"])
    assert trial.refusing == ["t.py::test_0"], "not a failing test, one that failed before, the session, a new one"
    trial._refused([f"t.py::test_{n}" for n in range(1, 8)] + ["t.py::test_1"])
    assert trial.refusing == [f"t.py::test_{n}" for n in (3, 4, 5, 6, 7, 1)], "the latest REFUSING_TESTS"
    tests = trial._tests()
    assert tests is not None and tests(Mutant("a.py", 1, "x = 1", "")) == trial.refusing
    trial.covering = lambda mutant: ["t.py::test_7", "t.py::test_cover"]
    assert trial._tests()(Mutant("a.py", 1, "x = 1", "")) == ["t.py::test_7", "t.py::test_cover", *[  # type: ignore[misc]
        f"t.py::test_{n}" for n in (3, 4, 5, 6, 1)]], "the covering tests first, each test once"
    assert trial.stats["refusing_tests"] == 6
