"""Candidates screened before they are tried: none that passes by swallowing the tests' errors, early returns last.

A candidate that adds a `return`/`break`/`continue` in a `finally:`, makes an `__exit__` return True or adds
a broad `except` that would catch the failing tests' exceptions makes those tests pass by hiding their
errors (analysis/swallowing.py): it is refused before it costs a driver run, and the refusal is kept for the
journal and the result. A candidate whose only change is an early `return` guard makes the function do
nothing on that path: it is tried after the others of its batch, so that one that keeps the function
working wins when both are green. The search's own candidates, its second edits and each batch of the
model's fills pass through the same screen.
"""

from __future__ import annotations

import re
from pathlib import Path

from agent_core.analysis.swallowing import REFUSED, early_return, swallowing_findings
from agent_core.search.candidate import Mutant
from agent_core.workspace.shadow import read_exact

_EXITS = re.compile(r"\b(return|break|continue|True)\b")  # what a swallowing construct needs in the new text
_BARE_RETURN = re.compile(r"^\s*return(\s+None)?\s*$", re.M)


class Screen:
    """Keeps the candidates that do not swallow the tests' errors of `types`, noting the others (`refused`)."""

    def __init__(self, root: Path, types: list[str]) -> None:
        self.root, self.types = root, types
        self.sources: dict[str, str | None] = {}
        self.refused: list[str] = []

    def _source(self, path: str) -> str | None:
        if path not in self.sources:
            try:
                self.sources[path] = read_exact(self.root / path)
            except (OSError, UnicodeDecodeError):
                self.sources[path] = None
        return self.sources[path]

    def _swallows(self, mutant: Mutant, source: str) -> str | None:
        cheap = "except" in mutant.text or _EXITS.search(mutant.text) and any(  # most candidates: no parse
            word in source for word in ("finally", "__exit__", "__aexit__"))
        found = swallowing_findings(source, mutant.applied(source), self.types) if cheap else []
        return found[0][1] if found else None

    def kept(self, mutants: list[Mutant]) -> list[Mutant]:
        """`mutants` without those that swallow the tests' errors (each noted in `refused`)."""
        out = []
        for mutant in mutants:
            source = self._source(mutant.path)
            why = self._swallows(mutant, source) if source is not None else None
            if why:
                self.refused.append(f"{mutant.path}:{mutant.line} ({mutant.description}) {REFUSED}: {why}")
            else:
                out.append(mutant)
        return out

    def early_last(self, mutants: list[Mutant]) -> list[Mutant]:
        """`mutants` with those that only add an early `return` after the others (each group in its order)."""
        def only_returns(mutant: Mutant) -> bool:
            source = self._source(mutant.path)
            return bool(source is not None and _BARE_RETURN.search(mutant.text)
                        and early_return(source, mutant.applied(source)))

        early = {id(m) for m in mutants if only_returns(m)}
        return [m for m in mutants if id(m) not in early] + [m for m in mutants if id(m) in early]

    def __call__(self, mutants: list[Mutant]) -> list[Mutant]:
        """`mutants` kept, early returns last."""
        return self.early_last(self.kept(mutants))
