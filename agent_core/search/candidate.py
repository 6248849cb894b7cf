"""What every candidate source hands the search: `Edit`, one change of a file's consecutive lines, and
`Mutant`, an edit placed in a file with the tier it is tried in.

The one-line catalogue (catalogue/), the templates (templates/) and any further source of candidates
return these; the driver (driver/) tries, ranks and describes them without knowing which source made them.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Mutant:
    """Line `line` of `path` (through line `end`, when set) replaced by `text` (without its final newline)."""

    path: str
    line: int
    text: str
    description: str
    tier: int = 0  # position of its bug class in the catalogue order (lower: tried first)
    end: int = 0  # the last line replaced, when a template replaces several (a block put under an `if`)
    concerns: tuple[str, ...] = ()  # why a green candidate may still be wrong (search/driver/ranking.py)

    @property
    def last(self) -> int:
        """The last original line this mutant replaces."""
        return max(self.line, self.end)

    def applied(self, source: str) -> str:
        """`source` with this mutant in place."""
        lines = source.split("\n")
        lines[self.line - 1 : self.last] = [self.text]
        return "\n".join(lines)


@dataclass(frozen=True)
class Edit:
    """Lines `first`..`last` (1-based) of a file replaced by `text` (several lines when it adds some), with what
    a reviewer reads of it and the kind of generator that made it."""

    first: int
    text: str
    last: int
    description: str
    kind: str = ""  # the template kind (templates/table.py), "" for the one-line catalogue

    def mutant(self, path: str, tier: int) -> Mutant:
        """This edit in `path`, tried in `tier`."""
        return Mutant(path, self.first, self.text, self.description, tier, self.last)
