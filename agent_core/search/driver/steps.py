"""Steps: candidates after which a failing test fails further on in its own body, and the search on top of one.

A bug that needs several edits gives the search no candidate that passes: each edit alone leaves the test
failing. But a failing test that checks several things in order says how far it got: the line of its own
function where its call raised. The driver records that line for each failing test without a candidate
(the baseline, in the same run) and after each candidate tried, with the type of what it raised
(sandboxed.py `Reached`, driver_script.py "reach"). A candidate after which every failing test either passes
or fails no earlier, one of them past the end of the statement it failed in before, and no other test it ran
failed, is a step: it fixed what the test checked first. Past the statement, not past the line: an exception
raised inside a `with pytest.raises(...)` block comes from a line after the block's own "did not raise" (the
`with` line, on Python 3.10 and later), and is no progress (jinja2's `xmlattr` bug had 530 such "steps"). The
type of what is raised is not compared: a check further on may fail another way (in a real pyparsing bug,
`Word(min=N)`'s regular expression, three edits, the failing test's `assertRaises` was not met; one of the
author's clauses moved the failure 7 lines on, both copies of it (search/twins.py) 33 lines, where a
`ParseException` came from a check that wants a match; the third edit on top passed).

The search on top of a step (on_top.py) writes it into the shadow and runs the single-edit search again
there: the search's own candidates of the changed source, and the model's fills of holes cut anew in it (the
lines the step sent the failing tests to and its own function's first), with reach on, so that a step on
top of a step is one more level (at most DEPTH). What passes is verified on the whole suite with the step
beneath it, and the fix is both edits as one candidate. The steps found are kept, the furthest first (KEPT);
each is searched on top of once, within STEP_S.

A step is evidence, never a fix: it is not verified alone, and a chain of steps that does not end in a
candidate that passes every test changes nothing.
"""

from __future__ import annotations

import ast
import contextlib
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Mutant
from agent_core.search.driver.interleave import is_infill
from agent_core.search.driver.ranking import innermost_function
from agent_core.search.driver.sandboxed import Reach, Reached
from agent_core.workspace.shadow import read_exact

KEPT = 4  # steps kept per level, the furthest first
DEPTH = 3  # levels of steps on steps (a step is level 1)
STEP_S = 60.0  # seconds the search on top of one step may take (its own steps on top included)
STEP_OWN = 150  # the search's own candidates tried on top of a step (one driver run)


@dataclass(frozen=True)
class Step:
    """A candidate that moved a failing test's failure further on: by `gain` lines in all (a test it made pass
    counts PASSED_GAIN), the first moved test now failing at `at` (its line and what it raised)."""

    mutant: Mutant
    gain: int
    order: int  # the order it was found in (ties: the first found first)
    at: Reach | None = None


PASSED_GAIN = 10_000  # a failing test a step made pass, against the lines another moved on
Ends = Callable[[str, int], int]  # (a test's node id, a line of its file) -> the last line of the statement there


def step_gain(failing: Sequence[str], outcome: str, baseline: Mapping[str, Reach], reach: Mapping[str, Reach],
              tests: Mapping[str, str] | None = None, ends: Ends | None = None) -> int | None:
    """How far a candidate moved the failing tests (see the module), or None when it is no step: it did not
    fail (passed: a fix; timeout: cut), a failing test fails before its baseline line, another test it ran
    (`tests`: its outcome per test, when every failing test ran) failed, or none moved past the end of the
    statement it failed in before (`ends`; without it, past the line). A failing test with no baseline line
    (it failed outside its call) or none after (it did not run: the driver stopped at the first failure)
    says nothing."""
    if outcome != "failed":
        return None
    tests = tests or {}
    if any(o != "passed" for t, o in tests.items() if t not in failing):
        return None
    gain = 0
    for test in failing:
        if tests.get(test) == "passed":
            gain += PASSED_GAIN
            continue
        before, after = baseline.get(test), reach.get(test)
        if before is None or after is None:
            continue
        if after[0] < before[0]:
            return None
        if after[0] > (ends(test, before[0]) if ends is not None else before[0]):
            gain += after[0] - before[0]
    return gain if gain > 0 else None


class StatementEnds:
    """`Ends` of the tests' files under `root`, each parsed once: the last line of the innermost statement that
    holds the line (a compound statement's whole block for its header line); the line itself when the file
    does not parse or no statement holds it."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self._spans: dict[str, list[tuple[int, int]]] = {}

    def __call__(self, nodeid: str, line: int) -> int:
        path = nodeid.split("::", 1)[0]
        if path not in self._spans:
            spans: list[tuple[int, int]] = []
            with contextlib.suppress(OSError, UnicodeDecodeError, SyntaxError, ValueError):
                tree = pysyntax.parse(read_exact(self.root / path))
                spans = [(n.lineno, n.end_lineno or n.lineno) for n in ast.walk(tree) if isinstance(n, ast.stmt)]
            self._spans[path] = spans
        holding = [(last - first, last) for first, last in self._spans[path] if first <= line <= last]
        return min(holding)[1] if holding else line


@dataclass
class Steps:
    """The steps of one level (see the module): noted from each driver run's reach, the furthest KEPT kept."""

    failing: Sequence[str]
    partials: bool = False  # a candidate that passes some failing tests is left to the partial fixes (partials.py)
    ends: Ends | None = None  # where the statement a test failed in ends (StatementEnds)
    kept: list[Step] = field(default_factory=list)
    found: int = 0  # steps seen in all
    explored: list[Step] = field(default_factory=list)  # searched on top of, in that order

    def note(self, results: Sequence[tuple[Mutant, str]], reached: Reached,
             tests_of: Mapping[int, Mapping[str, str]] | None = None) -> int:
        """Note a driver run's results (`reached`: its reach, `tests_of`: each one's outcome per test when every
        failing test ran): how many steps it had."""
        new = 0
        for mutant, outcome in results:
            tests = (tests_of or {}).get(id(mutant))
            if self.partials and any((tests or {}).get(t) == "passed" for t in self.failing):
                continue  # combined with the other partial fixes, not searched on top of
            reach = reached.of.get(id(mutant)) or {}
            gain = step_gain(self.failing, outcome, reached.baseline, reach, tests, self.ends)
            if gain is None:
                continue
            new += 1
            self.found += 1
            at = next((reach[t] for t in self.failing if t in reach and reach[t] != reached.baseline.get(t)), None)
            self.kept.append(Step(mutant, gain, self.found, at))
        self.kept.sort(key=lambda s: (-s.gain, s.order))
        del self.kept[KEPT:]
        return new

    def next(self) -> Step | None:
        """The furthest step not yet searched on top of (noted as explored), or None."""
        for step in self.kept:
            if all(step is not e for e in self.explored):
                self.explored.append(step)
                return step
        return None

    def figures(self, won: str | None) -> dict[str, Any]:
        """The journal's account: steps found, the ones searched on top of (their descriptions and gains), and the
        steps beneath a winning fix."""
        return {"found": self.found,
                "explored": [{"step": s.mutant.description, "gain": s.gain, "model": is_infill(s.mutant),
                              **({"fails_at": s.at[0], "raised": s.at[1]} if s.at else {})} for s in self.explored],
                "won": won}


def moved(step: Mutant, path: str, line: int) -> int | None:
    """`path`:`line` of the original in the source with `step` made (None: one of the lines the step replaced)."""
    if path != step.path or line < step.line:
        return line
    if line > step.last:
        return line + len(step.text.split("\n")) - (step.last - step.line + 1)
    return None


def places_on_top(step: Mutant, stepped: str, places: Sequence[tuple[str, int]],
                  newly_run: Mapping[str, set[int]] | None = None) -> list[tuple[str, int]]:
    """The holes' places (path, line) for a search on top of `step`, in `stepped` (its file with the step made):
    first the lines of its file the failing tests run with the step made and did not before (`newly_run`: the
    step sent them there, and what fails now may be there), then every line of the step's function (the edits of
    one fix lie close together), each the nearest to the step first, then the newly run lines of other files;
    then `places` (ranked, in the original lines) moved past the lines the step added or removed. The step's own
    lines, blank lines and comments are left out."""
    end = step.line + len(step.text.split("\n")) - 1  # the step's last line in `stepped`
    lines = stepped.split("\n")

    def code(line: int) -> bool:
        text = lines[line - 1].strip() if 0 < line <= len(lines) else ""
        return bool(text) and not text.startswith("#") and not step.line <= line <= end

    def nearest(group: Iterable[int]) -> list[int]:
        return sorted((line for line in group if code(line)), key=lambda line: min(abs(line - step.line),
                                                                                   abs(line - end)))

    span = innermost_function(stepped, step.line)
    out = {(step.path, line): None for line in nearest((newly_run or {}).get(step.path, ()))}
    out.update(((step.path, line), None) for line in nearest(range(span[0], span[1] + 1) if span else ()))
    out.update(((path, line), None) for path, group in (newly_run or {}).items() if path != step.path
               for line in sorted(group))
    for path, line in places:
        if (at := moved(step, path, line)) is not None:
            out.setdefault((path, at), None)
    return list(out)
