"""The model's fills as batches beside the search's own driver runs: one hole's candidates per batch.

The search tries its own candidates (the catalogue and the templates, ranked) in driver runs of a
chunk each. A `ModelBatches` gives it the next hole's candidates each time it is awaited (the driver
awaits it in the background, while its own runs go on: driver/single_edit.py): the samples of the next
hole, the holes cut at the most suspicious lines first (the same ranking as the catalogue's), spread: a
line's own hole comes before the slots beside the lines ranked above it and those before their
statements and blocks (infill/holes.py `spread_holes`, KIND_COST). A hole whose samples all
repeat earlier candidates yields nothing and the next one is asked at once. The batches end at the
deadline given or when the endpoint fails (said once in the figures). When the holes of the first lines
run out, those of the ranking's next lines are cut, as many lines at a time (`HoleQueue.later`), so that the
model is not left idle while time is left (where the first lines make few holes, or the fills begin early;
the real-history bugs' tasks asked 6-31 holes in 280 s and none ran out: `rounds` 0). When every line's
holes are asked, a call finds none until `prefer` cuts more.

Each batch's candidates are tried and verified by the same driver as the search's own; the figures
(`figures()`) say per hole how many samples were drawn, kept and tried, the tokens and seconds, and
which hole's candidate won.

The search's own runs also say where the fault is: a candidate that made the failing tests pass but
broke others (the whole suite refused it) changed the failing tests' outcome from its line, the
evidence mutation-based fault localization ranks lines by (Metallaxis: Papadakis and Le Traon, "Metallaxis-FL",
STVR 2015). The line's own hole, its condition's `and` clause and its statement's (`PROMOTED`) are asked
next (`HoleQueue.prefer`), cut there when the spectrum's ranking had not reached the line.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable, Iterator, Mapping, Sequence
from itertools import zip_longest
from typing import Any

from agent_core.llm.base import LLMClient, LLMError
from agent_core.search.candidate import Mutant
from agent_core.search.evidence.spectrum import Suspect
from agent_core.search.infill import INFILL_TIER, Hole, HoleFiller, HoleReport, InfillOptions, spread_holes

PROMOTED = ("shown", "line", "and", "statement")  # the holes of a line a refused candidate passed the failing tests
# from (a condition there that made them pass and broke others may want a clause more)


def ranked_places(suspects: Sequence[Suspect], sources: Mapping[str, str],
                  skip: Callable[[str, int], object] | None = None,
                  named: Sequence[tuple[str, int]] = ()) -> list[tuple[str, int]]:
    """Every (path, line) of the suspects where holes may be cut, best first, taken in turn from three rankings: the
    spectrum's (each line's score, ties in suspect and line order, as the catalogue ranks its lines), the lines
    of the functions the failing tests call by name (evidence/called.py, by the same scores), and `named`: the
    lines that say the words of the failing tests' names (evidence/words.py `ranked`, already in order; their
    files must be in `sources`); each place once.

    None of them is trusted alone. Put first (a bonus on their scores), the called functions took the first
    holes (every hole in two) of three real sqlparse bugs into a public entry point (`format`, `get_alias`,
    `parse`) that only hands the work on, where in one the spectrum's first function was the author's; in
    attrs' bug the author's function is the one the tests call, below the class machinery every failing test
    runs; the spectrum cannot tell apart the lines every test runs alike, which the tests' words may name. In
    turn, each gets the holes it ranks first. A (path, line) for which `skip` is true is left out (the tests' own
    checks, driver/screen.py `checks_at`).
    """
    def ordered(chosen: Sequence[Suspect]) -> list[tuple[str, int]]:
        ranked = sorted(((score, s.file, line) for s in chosen if s.file in sources for line, score in s.searched()),
                        key=lambda entry: -entry[0])
        return [(path, line) for _, path, line in ranked]

    turns = [ordered(suspects), ordered([s for s in suspects if s.called]),
             [place for place in named if place[0] in sources]]
    places: dict[tuple[str, int], None] = {}
    for group in zip_longest(*turns):
        places.update((place, None) for place in group if place is not None and not (skip and skip(*place)))
    return list(places)


def ranked_holes(suspects: Sequence[Suspect], sources: Mapping[str, str], lines: int,
                 skip: Callable[[str, int], object] | None = None) -> list[Hole]:
    """The holes of the first `lines` places of `ranked_places`, a line's own hole before the slots and blocks of
    the lines above it (infill/holes.py `spread_holes`)."""
    return spread_holes(ranked_places(suspects, sources, skip)[:lines], sources)


def is_infill(mutant: Mutant) -> bool:
    """Whether `mutant` is one of the model's fills (not one of the search's own candidates)."""
    return mutant.tier == INFILL_TIER


class HoleQueue:
    """The holes still to be filled, in order, handed out one at a time (ModelBatches takes them lazily);
    `prefer` moves the holes of lines the search's own runs pointed at to the front. Once none is pending, the
    holes of the next `step` places of `later` are cut (the ranking's lines after the first ones), so that the
    model does not sit idle while time is left."""

    def __init__(self, holes: Sequence[Hole], sources: Mapping[str, str],
                 later: Sequence[tuple[str, int]] = (), step: int = 8) -> None:
        self.pending = list(holes)
        self.given: list[Hole] = []
        self.promoted: list[Hole] = []
        self.later = list(later)
        self.rounds = 0  # times the next places of `later` were cut
        self._sources, self._step = sources, max(1, step)

    def pop(self) -> Hole | None:
        """The next hole, noted as given; None while none is pending and `later` has no place left (`prefer`
        may add some)."""
        while not self.pending and self.later:
            places, self.later = self.later[: self._step], self.later[self._step :]
            self.rounds += 1
            self.pending = [hole for hole in spread_holes(places, self._sources) if hole not in self.given]
        if not self.pending:
            return None
        hole = self.pending.pop(0)
        self.given.append(hole)
        return hole

    def __iter__(self) -> Iterator[Hole]:
        while (hole := self.pop()) is not None:
            yield hole

    def __len__(self) -> int:
        return len(self.given) + len(self.pending)

    def prefer(self, places: Sequence[tuple[str, int]]) -> bool:
        """The PROMOTED holes of each (path, line) of `places` next, in that order: moved up when already cut,
        cut when not (a line the spectrum ranked below the holes asked); a hole already asked is not again.
        Whether any hole was moved up or cut."""
        front: list[Hole] = []
        for place in dict.fromkeys(places):
            for hole in spread_holes([place], self._sources):
                own = not hole.inline or hole.first == place[1]  # a clause of the line's own condition, not of
                # the one it runs under
                if hole.kind in PROMOTED and own and hole not in self.given and hole not in front:
                    front.append(hole)
        if front:
            self.promoted += [hole for hole in front if hole not in self.promoted]
            self.pending = front + [hole for hole in self.pending if hole not in front]
        return bool(front)


class FillsEnd:
    """When the model's fills stop: `first` (None: no end of their own), or the moment `extend(first)` gives once it
    can tell (it returns None until then; its answer stands). Under a run's time budget, the fills are given the
    time a model round after them could not finish in (pipeline/timebudget.py `fills_extension`)."""

    def __init__(self, first: float | None, extend: Callable[[float], float | None] | None = None) -> None:
        self.first = first
        self._at, self._extend = first, extend if first is not None else None

    @property
    def at(self) -> float | None:
        """The end as it stands now."""
        if self._extend is not None and self._at is not None and (moved := self._extend(self._at)) is not None:
            self._at, self._extend = max(self._at, moved), None
        return self._at

    @property
    def extended_s(self) -> float:
        """Seconds the end was moved on by (0 while `extend` could not tell, or said no)."""
        return self._at - self.first if self._at is not None and self.first is not None else 0.0


class ModelBatches:
    """The next hole's candidates, each time it is awaited; None once there are no more (see the module). `extend`:
    what may move the fills' end (`options.deadline`) later (FillsEnd)."""

    def __init__(self, llm: LLMClient, holes: list[Hole], sources: Mapping[str, str], options: InfillOptions,
                 on_hole: Callable[[int, int, Hole], None] | None = None,
                 screen: Callable[[list[Mutant]], list[Mutant]] | None = None,
                 later: Sequence[tuple[str, int]] = (), step: int = 8,
                 extend: Callable[[float], float | None] | None = None) -> None:
        self._filler, self._sources, self._options = HoleFiller(llm, sources, options), sources, options
        self.end = FillsEnd(options.deadline, extend)
        self._holes = HoleQueue(holes, sources, later, step)
        self._on_hole, self._screen = on_hole, screen
        self.reports: list[HoleReport] = []
        self.tried: dict[int, int] = {}  # hole index -> its candidates tried
        self._of: dict[int, int] = {}  # id of a candidate -> its hole's index
        self.done = False

    async def __call__(self) -> list[Mutant] | None:
        """The next hole's candidates that are new and pass the screen (driver/screen.py; an empty list: that
        hole made none); None: no hole now (`prefer` may add one), or no more (`done`: the deadline passed, the
        endpoint failed)."""
        deadline = self.end.at
        if deadline is not None and time.monotonic() >= deadline:
            self.done = True
        if self.done:
            return None
        try:
            await self._filler.spec()
        except LLMError as exc:  # the endpoint cannot even be found: one report says why, no candidates
            self.done = True
            if (failed := self._filler.failed(iter(self._holes), exc)) is not None:
                self.reports.append(failed)
            return None
        hole = None
        for pending in self._holes:
            if await self._filler.asks(pending):
                hole = pending
                break
        if hole is None:  # none now: the search's runs may still point at a line (`prefer`)
            return None
        index = len(self.reports)
        if self._on_hole is not None:
            self._on_hole(index + 1, len(self._holes), hole)
        options = None if deadline == self._options.deadline else dataclasses.replace(self._options, deadline=deadline)
        report = await self._filler.fill(hole, options)  # sampled until the end as it stands
        self.reports.append(report)
        if report.stopped:
            self.done = True
        batch = self._screen(list(report.mutants)) if self._screen is not None else list(report.mutants)
        for mutant in batch:
            self._of[id(mutant)] = index
        return batch

    def prefer(self, refused: Sequence[tuple[Mutant, str]]) -> bool:
        """Note a driver run's results whose passing candidates the whole suite refused: their lines' holes go
        next (HoleQueue.prefer; the model's own candidates are not evidence of the spectrum's kind). Whether a
        hole was moved up or cut."""
        return self._holes.prefer([(m.path, m.line) for m, outcome in refused
                                   if outcome == "passed" and not is_infill(m)])

    @property
    def options(self) -> InfillOptions:
        """How each hole is sampled."""
        return self._options

    @property
    def sources(self) -> Mapping[str, str]:
        """The text of the files the holes are cut in."""
        return self._sources

    def label(self, mutant: Mutant) -> str:
        """A fill's hole (`line 12 (line)`), or a candidate's description when it is none of the fills'."""
        index = self._of.get(id(mutant))
        return self.reports[index].hole.label if index is not None else mutant.description

    def count_tried(self, mutants: Sequence[Mutant]) -> None:
        """Note the candidates of a driver run that were tried."""
        for mutant in mutants:
            hole = self._of.get(id(mutant))
            if hole is not None:
                self.tried[hole] = self.tried.get(hole, 0) + 1

    def figures(self, winner: Mutant | None) -> dict[str, Any]:
        """The journal's and `--json`'s account of the model's fills: totals, and per hole what it cost."""
        won = self._of.get(id(winner)) if winner is not None else None
        holes = [{**r.as_dict(), "tried": self.tried.get(i, 0), "won": i == won} for i, r in enumerate(self.reports)]
        errors = [r.error for r in self.reports if r.error]
        return {
            "holes": len(self.reports),
            "samples": sum(r.drawn for r in self.reports),
            "kept": sum(r.kept for r in self.reports),
            "tried": sum(self.tried.values()),
            "tokens": sum(r.tokens for r in self.reports),
            "seconds": round(sum(r.seconds for r in self.reports), 2),
            "won": self.reports[won].hole.label if won is not None else None,
            "promoted": len(self._holes.promoted),
            "rounds": self._holes.rounds,
            "extended_s": round(self.end.extended_s, 1),
            "error": errors[-1] if errors else None,
            "per_hole": holes,
        }
