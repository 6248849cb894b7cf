"""A fix that drops code (hides the module's, or exits early), held while the model may still write one that does not.

A verified candidate whose function has fewer of the names, attributes or keyword arguments it had
(driver/distinguish.py `drops`: `total = round(total, 2)` made `return total`, an argument deleted) passes
the tests by doing less, and deleting code is the commonest way to green that does not fix (Qi, Long, Achour
and Rinard, ISSTA 2015). One that binds a name of the module inside the function (`shadows`: `words =
re.compile(...).findall` where the function called the module's buggy `words`) works around the code the
tests reach instead of fixing it. One that adds an exit after which more of its function would have run
(`exits_early`: `return out` under a loop's `if`, where the loop crashed on a later item; a `break`; a guard
that returns before the work) passes by skipping what failed, not by making it work. One after which the
module no longer names a function or method of its own that it named before (`leaves_unused`: `values =
[float(line) for line in lines if ...]` in place of `values = _numbers(lines)`) writes out again what the
helper did, and leaves the code the tests reached dead.

A fix of the search's own is not held: its candidates are ranked, those that delete a statement or drop a
parameter's use after the rest (driver/ranking.py), and a rival of its function is looked for; and at the
32 real-history bugs with the bundled model (bench/history_fix_rate.py at d1de617) the two search fixes that
dropped code were the authors' own (a refusal lifted, a condition made simpler), each held 60 s and 11,042 and
37,546 tokens of fills for nothing. The model's answer to a hole is free text: a fill that rewrote a line
to less passed the tests where the line wanted a `return` after it, and the fills write what no template
does, a hole at a time: the slot after that line holds the `return total` that keeps the rounding.

So the first such fill that is a fix is held: the shadow is put back as it was, and the
search goes on for at most HOLD_S seconds more (never past its own end). A fix that drops nothing, found
meanwhile, is the fix; another fix that drops code is put back too (the first is kept). When the time is
up, or the search ends without a fix, the held fix is written back and returned, with its suite's report.
`figures` says what was held, what it drops, and whether it was kept; `held_sentence` says it for the
fix's explanation.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any

from agent_core.models import TestReport
from agent_core.search.candidate import Mutant
from agent_core.search.driver.distinguish import drops, exits_early, leaves_unused, shadows
from agent_core.search.driver.interleave import is_infill
from agent_core.workspace.shadow import write_exact

HOLD_S = 60.0  # how long a fix that drops code is held: six to twelve of the bundled model's holes


@dataclass
class Held:
    """The first verified fill that drops code, while the search looks for a fix that keeps it (module docstring)."""

    deps: Any  # the search's (driver/localizing.py SearchDeps): its shadow
    hold_s: float = field(default_factory=lambda: HOLD_S)
    fix: tuple[Mutant, TestReport, str, bool] | None = None  # (fix, its suite's report, its file before it,
    # whether the shadow knew that file before)
    until: float = float("inf")
    figures: dict[str, Any] = field(default_factory=dict)

    def offer(self, mutant: Mutant, report: TestReport, source: str, known: bool) -> bool:
        """Whether the verified `mutant` (in the shadow, `source` its file before it; `known`: the shadow had that
        file among its originals before) is held back: a fill that drops code or hides a name of the module. The
        shadow then holds `source` again."""
        if not is_infill(mutant):
            return False
        dropped, hidden, early = drops(source, mutant), shadows(source, mutant), exits_early(source, mutant)
        unused = leaves_unused(source, mutant)
        if not dropped and not hidden and not early and not unused:
            return False
        shadow = self.deps.shadow
        write_exact(shadow.root / mutant.path, source)
        if not known:
            shadow.originals.pop(mutant.path, None)
        if self.fix is None:
            self.fix = (mutant, report, source, known)
            self.until = time.monotonic() + self.hold_s
            self.figures = {"description": mutant.description, "line": mutant.line, "file": mutant.path,
                            "drops": dropped, "shadows": hidden, "exits": early, "unused": unused,
                            "held_s": self.hold_s}
        else:
            self.figures["also_dropping"] = self.figures.get("also_dropping", 0) + 1
        return True

    def end(self, at: float) -> float:
        """`at`, or the end of the hold when that comes first."""
        return min(at, self.until)

    def due(self) -> bool:
        """Whether a fix is held and its time is up."""
        return self.fix is not None and time.monotonic() >= self.until

    def settle(self, found: tuple[Mutant, TestReport] | None) -> tuple[Mutant, TestReport] | None:
        """The search's answer: `found`, or else the held fix, written back into the shadow; the figures say
        which."""
        if self.fix is None:
            return found
        self.figures["kept"] = found is None
        if found is not None:
            return found
        mutant, report, source, _ = self.fix
        self.deps.shadow.remember(mutant.path)
        write_exact(self.deps.shadow.root / mutant.path, mutant.applied(source))
        return mutant, report


def held_sentence(held: dict[str, Any] | None) -> str:
    """One sentence for the fix's explanation on a fix that dropped code: kept for want of another, or replaced."""
    if not held or "kept" not in held:
        return ""
    said = []
    if held.get("drops"):
        said.append(f"drops {', '.join(held['drops'])} from the function")
    if held.get("shadows"):
        said.append(f"hides the module's {', '.join(f'`{name}`' for name in held['shadows'])} behind a local name")
    if held.get("exits"):
        said.append(f"adds {' and '.join(held['exits'])} to the function")
    if held.get("unused"):
        said.append(f"leaves the module's {', '.join(f'`{name}`' for name in held['unused'])} unused")
    what = " and ".join(said)
    if held["kept"]:
        held_s = held.get("held_s", HOLD_S)
        return f"This fix {what}: the search went on for {held_s:.0f} s and found no fix that does not."
    return f"A first fix that passed, {held.get('description', '')}, {what}; this one does not."
