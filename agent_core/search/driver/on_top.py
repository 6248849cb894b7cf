"""The search on top of a step (driver/steps.py): the step written into the shadow, the single-edit search again.

`OnTop.search` is the `on_step` of driver/single_edit.py's `find_single_edit`: for a step, it writes the step
into the shadow, makes the search's own candidates of the changed source (STEP_OWN, none touching the step's
lines) and, with a model, the model's fills of holes cut anew there (steps.py `places_on_top`: the step's
function first), and runs the single-edit search on them within the step's time, the fills at once, reach
recorded again (a step on top, DEPTH levels). A candidate that passes the whole suite on top of the step is
the fix: the two edits as one candidate (pairs.py `combined`), kept in the shadow. Otherwise the shadow is
restored exactly.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Sequence
from typing import Any

from agent_core.llm.base import LLMClient
from agent_core.models import TestReport
from agent_core.search.candidate import Mutant
from agent_core.search.driver.interleave import ModelBatches
from agent_core.search.driver.localizing import Localization, SearchDeps
from agent_core.search.driver.pairs import combined
from agent_core.search.driver.sandboxed import collect_coverage
from agent_core.search.driver.screen import Screen
from agent_core.search.driver.single_edit import candidates, find_single_edit
from agent_core.search.driver.steps import DEPTH, STEP_OWN, StatementEnds, Step, Steps, moved, places_on_top
from agent_core.search.evidence.inputs import FailingInputs, failing_types, seen_exceptions
from agent_core.search.evidence.spectrum import Suspect
from agent_core.search.infill import Hole, spread_holes
from agent_core.testing.runner import pytest_argv
from agent_core.workspace.shadow import read_exact, write_exact

NEAR_LINES = 12  # lines near the step whose candidates the search's own on top of it tries first
COVERAGE_S = 30.0  # the failing tests' coverage with a step made: this plus four times the suite's time at most
FILL_FIGURES = ("holes", "samples", "kept", "tried", "tokens", "seconds")  # summed over the searches on top


def _apart(candidate: Mutant, step: Mutant) -> bool:
    """Whether `candidate` (of the file with `step` made) leaves the step's lines alone."""
    if candidate.path != step.path:
        return True
    end = step.line + len(step.text.split("\n")) - 1  # the step's last line once made
    return candidate.last < step.line or candidate.line > end


def suspects_on_top(step: Mutant, stepped: str, suspects: Sequence[Suspect],
                    newly_run: dict[str, set[int]]) -> list[Suspect]:
    """The suspects for the search's own candidates on top of `step`: first the NEAR_LINES lines of the step's
    file that steps.py `places_on_top` puts first (the lines the step sent the failing tests to, then its
    function's, the nearest first), scored above every other line; then `suspects` with their lines moved past
    the lines the step added or removed (its own left out)."""
    near = [line for path, line in places_on_top(step, stepped, (), newly_run) if path == step.path][:NEAR_LINES]
    top = max((score for s in suspects for _, score in s.searched()), default=0.0) + 1.0
    out = [Suspect(step.path, "", 1, len(stepped.split("\n")), near, top + 1.0,
                   [top + (len(near) - n) / len(near) for n in range(len(near))])] if near else []
    for suspect in suspects:
        kept = [(at, score) for line, score in suspect.searched()
                if (at := moved(step, suspect.file, line)) is not None]
        if kept:
            out.append(dataclasses.replace(suspect, lines=[line for line, _ in kept],
                                           line_scores=[score for _, score in kept], more_lines=[]))
    return out


@dataclasses.dataclass
class OnTop:
    """What a search on top of a step needs of the search it came from (see the module)."""

    deps: SearchDeps
    report: TestReport  # the failing run: the baseline every candidate's whole-suite run is judged against
    where: Localization
    suspects: list[Suspect]
    inputs: FailingInputs
    suite_s: float
    model: LLMClient | None = None
    batches: ModelBatches | None = None  # the first level's fills (their options and sources)
    places: Sequence[tuple[str, int]] = ()  # where the first level cut holes, ranked
    on_hole: Callable[[int, int, Hole], None] | None = None
    won: str | None = None  # the steps beneath the fix, when one was found on top of them
    tried: int = 0  # candidates tried on top of steps
    newly_run: int = 0  # lines the failing tests ran on top of the steps and not before
    fills: dict[str, float] = dataclasses.field(default_factory=lambda: dict.fromkeys(FILL_FIGURES, 0))

    async def search(self, step: Step, until: float, depth: int = 1) -> tuple[Mutant, TestReport] | None:
        """The fix on top of `step` (both edits, in the shadow), or None (the shadow as it was)."""
        shadow, first = self.deps.shadow, step.mutant
        known = first.path in shadow.originals
        shadow.remember(first.path)
        before = read_exact(shadow.root / first.path)
        stepped = first.applied(before)
        write_exact(shadow.root / first.path, stepped)
        found: tuple[Mutant, TestReport] | None = None
        try:
            screen = Screen(shadow.root, failing_types(self.report))  # reads the stepped file
            newly_run = await self._newly_run(first, until)
            suspects = suspects_on_top(first, stepped, self.suspects, newly_run)
            own = screen([c for c in candidates(shadow.root, suspects, STEP_OWN, seen_exceptions(self.report),
                                                self.inputs) if _apart(c, first)])
            batches = self._batches(first, stepped, screen, until, newly_run)
            above = Steps(self.where.failing, ends=StatementEnds(shadow.root)) if depth < DEPTH else None
            winner, report, figures = await find_single_edit(
                self.deps, self.where.failing, own, self.where, self.suite_s, self.report, until, rivals=False,
                more=batches, more_until=until, steps=above,
                on_step=(lambda s, u: self.search(s, u, depth + 1)) if above is not None else None,
                fills_at_once=True)
            self.tried += figures.get("tried", 0)
            if batches is not None:
                made = batches.figures(None)
                for key in FILL_FIGURES:
                    self.fills[key] += made[key]
            if winner is not None and report is not None:
                both = combined(first, winner, before, read_exact(shadow.root / first.path))
                found = both, report
                self.won = f"{first.description} (+{step.gain})" + (f" > {self.won}" if self.won else "")  # the
                # search on top of this one's step set it first
                return found
            return None
        finally:
            if found is None:
                write_exact(shadow.root / first.path, before)
                if not known:
                    shadow.originals.pop(first.path, None)

    async def _newly_run(self, step: Mutant, until: float) -> dict[str, set[int]]:
        """The lines the failing tests run with `step` in the shadow and did not run before (per-test coverage of
        them alone, as localizing took it: driver/localizing.py); empty without the first coverage (or pytest), or
        when the run fails."""
        before = self.where.failing_ran()
        is_pytest, argv = pytest_argv(self.deps.settings.test_command, self.deps.sandbox.python)
        if not before or not is_pytest:
            return {}
        timeout = min(until - time.monotonic(), COVERAGE_S + 4 * self.report.duration_s)
        if timeout <= 0:
            return {}
        data = await collect_coverage(self.deps.sandbox, self.deps.shadow.root, argv[3:], timeout,
                                      self.where.test_bound_s or timeout, list(self.where.failing))
        failing = set(self.where.failing)
        out: dict[str, set[int]] = {}
        for path, per_test in (data.get("files") or {}).items():
            ran = {line for nodeid, lines in per_test.items() if nodeid in failing for line in lines}
            was = {at for line in before.get(path, ()) if (at := moved(step, path, line)) is not None}
            if new := ran - was:
                out[path] = new
        self.newly_run += sum(len(lines) for lines in out.values())
        return out

    def _batches(self, step: Mutant, stepped: str, screen: Screen, until: float,
                 newly_run: dict[str, set[int]]) -> ModelBatches | None:
        """The model's fills of holes cut in the stepped source (steps.py `places_on_top`); None without a model."""
        if self.model is None or self.batches is None:
            return None
        sources = {**self.batches.sources, step.path: stepped}
        places = [p for p in places_on_top(step, stepped, self.places, newly_run) if p[0] in sources]
        lines = self.deps.settings.search.infill_lines
        options = dataclasses.replace(self.batches.options, deadline=until)
        return ModelBatches(self.model, spread_holes(places[:lines], sources), sources, options,
                            on_hole=self.on_hole, screen=screen, later=places[lines:], step=lines)

    def figures(self) -> dict[str, Any]:
        """Candidates tried on top of steps and the fills made there."""
        return {"tried": self.tried, "newly_run": self.newly_run,
                "fills": {k: round(v, 2) for k, v in self.fills.items()}}
