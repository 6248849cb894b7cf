"""Two partial fixes made one: candidates that each pass some of the failing tests, tried together.

A bug behind several failing tests may need an edit for each (a message for each of two errors, one
repair in each of two functions). Such an edit alone passes some of the failing tests and fails the
others, and the search's driver, which stops at the first failing test, says only "failed". With two
to eight failing tests, the model's fills are tried with every failing test run (sandboxed.try_mutants
`tests_of`), and the search's own candidates too when those tests are quick (driver/single_edit.py):
a candidate that passes some of them, and fails no other test it ran (its line's covering tests), is a
partial fix. Two partial fixes of one file that pass different failing tests (neither's set holds the
other's), at places that do not overlap, are then one candidate with both edits, screened, tried and
verified like any other; a combination that still passes only some of the failing tests is a partial
fix in its turn (three tests, three edits). Unlike the two-edit step (driver/pairs.py), which runs the
first 60 candidates against each failing test alone and searches a second edit on top of a partial
fix, this needs no run of its own: it reads what the driver runs already said. This is the crossover of genetic repair
(GenProg: Le Goues et al., TSE 2012), kept to edits whose passing tests complement each other, so that
each combination tried is one the tests already point at.

An edit is compared as its hunk: the lines it really changes (a slot's candidate rewrites the line it is
anchored to unchanged, and that line is not part of its change).
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from typing import Any

from agent_core.search.candidate import Mutant
from agent_core.search.driver.interleave import is_infill
from agent_core.search.driver.pairs import combined as both_edits

KEPT = 12  # partial fixes kept for combining, of the search's own and of the model's fills each: the first ones
# (the likelier candidates come first)


@dataclass(frozen=True)
class Hunk:
    """What a candidate changes in the original lines: lines [start, end) (0-based; start == end: an insertion
    before line start + 1) become `lines`."""

    start: int
    end: int
    lines: tuple[str, ...]

    def clashes(self, other: Hunk) -> bool:
        """Whether the two changes cannot both be made: their replaced lines overlap, or one inserts inside the
        other's lines, or both insert at one place (their order would be a guess)."""
        if self.start == self.end and other.start == other.end:
            return self.start == other.start
        return max(self.start, other.start) < min(self.end, other.end) or \
            any(h.start == h.end and o.start < h.start < o.end for h, o in ((self, other), (other, self)))


def hunk(mutant: Mutant, source: str) -> Hunk | None:
    """The lines `mutant` changes in `source` (the lines it rewrites unchanged at either end left out); None when
    it changes nothing."""
    old = source.split("\n")[mutant.line - 1 : mutant.last]
    new = mutant.text.split("\n")
    head = 0
    while head < min(len(old), len(new)) and old[head] == new[head]:
        head += 1
    tail = 0
    while tail < min(len(old), len(new)) - head and old[len(old) - 1 - tail] == new[len(new) - 1 - tail]:
        tail += 1
    if head == len(old) == len(new):
        return None
    return Hunk(mutant.line - 1 + head, mutant.last - tail, tuple(new[head : len(new) - tail]))


def combined(first: Mutant, second: Mutant, hunks: Sequence[Hunk], source: str) -> Mutant:
    """One candidate making both edits (`hunks`, theirs, which do not clash) in `source` (driver/pairs.py's
    `combined` on the text with both made)."""
    final = source.split("\n")
    for h in sorted(hunks, key=lambda h: (h.start, h.end), reverse=True):  # the lower lines keep their numbers
        final[h.start : h.end] = list(h.lines)  # at one start, an insertion goes in front of a replacement
    return both_edits(first, second, source, "\n".join(final), "and")


@dataclass(frozen=True)
class _Partial:
    mutant: Mutant
    passed: frozenset[str]
    hunk: Hunk


class Partials:
    """The partial fixes among the candidates tried with every failing test run, and the combinations of two of
    them still to try (see the module). `sources`: the files' text the candidates were made from; `screen`:
    what every candidate passes before it is tried (driver/screen.py)."""

    def __init__(self, failing: Sequence[str], sources: Mapping[str, str],
                 screen: Callable[[list[Mutant]], list[Mutant]] | None = None) -> None:
        self.failing = frozenset(failing)
        self._sources, self._screen = sources, screen
        self.kept: list[_Partial] = []
        self.parts: dict[int, tuple[Mutant, Mutant, Mutant]] = {}  # id of a combination -> it, the two it combines
        # (it is kept: an id is only unique while its object lives)
        self.tried = 0  # combinations tried
        self._made: set[tuple[str, int, int, str]] = set()

    def passed(self, outcome: str, tests: Mapping[str, str]) -> frozenset[str] | None:
        """The failing tests a candidate passed, when that makes it a partial fix: it failed, passed some of the
        failing tests and not all, and every other test it ran passed."""
        if outcome != "failed":
            return None
        passed = frozenset(t for t in self.failing if tests.get(t) == "passed")
        others = [o for t, o in tests.items() if t not in self.failing]
        return passed if 0 < len(passed) < len(self.failing) and all(o == "passed" for o in others) else None

    def after(self, results: Sequence[tuple[Mutant, str]], tests_of: Mapping[int, Mapping[str, str]]) -> list[Mutant]:
        """Note a driver run's results (`tests_of`: each one's outcome per test, by id): the combinations of each
        new partial fix with the earlier ones, new and screened, the widest first."""
        out: list[tuple[int, Mutant]] = []
        for mutant, outcome in results:
            passed = self.passed(outcome, tests_of.get(id(mutant)) or {})
            source = self._sources.get(mutant.path)
            if passed is None or source is None:
                continue
            own = hunk(mutant, source)
            if own is None:
                continue
            for earlier in self.kept:
                union = passed | earlier.passed
                if earlier.mutant.path != mutant.path or union in (passed, earlier.passed) or own.clashes(earlier.hunk):
                    continue
                both = combined(earlier.mutant, mutant, (earlier.hunk, own), source)
                key = (both.path, both.line, both.last, both.text)
                if key not in self._made:
                    self._made.add(key)
                    self.parts[id(both)] = (both, earlier.mutant, mutant)
                    out.append((len(union), both))
            if sum(is_infill(k.mutant) == is_infill(mutant) for k in self.kept) < KEPT:
                self.kept.append(_Partial(mutant, passed, own))
        ranked = [m for _, m in sorted(out, key=lambda entry: -entry[0])]  # stable: the order they came in
        return self._screen(ranked) if self._screen is not None and ranked else ranked

    def own(self) -> list[Mutant]:
        """The search's own partial fixes (not the model's fills), the most failing tests passed first."""
        kept = sorted((k for k in self.kept if not is_infill(k.mutant)), key=lambda k: -len(k.passed))
        return [k.mutant for k in kept]  # stable: the order they came in among equals

    def figures(self, label: Callable[[Mutant], str], winner: Mutant | None) -> dict[str, Any]:
        """The journal's account: partial fixes kept, combinations made and tried, and the two parts of a winning
        combination (each named by `label`)."""
        entry = self.parts.get(id(winner)) if winner is not None else None
        won = " + ".join(label(m) for m in entry[1:]) if entry is not None and entry[0] is winner else None
        return {"partials": len(self.kept), "made": len(self.parts), "tried": self.tried, "won": won}
