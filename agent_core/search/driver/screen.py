"""Candidates screened before they are tried: none that passes by swallowing the tests' errors, early returns last.

A candidate that adds a `return`/`break`/`continue` in a `finally:`, makes an `__exit__` return True or adds
a broad `except` that would catch the failing tests' exceptions makes those tests pass by hiding their
errors (analysis/swallowing.py); one that changes a function the tests check with (an assertion helper the
project ships, `assertion_helpers`) makes them pass by weakening the check. Either is refused before it
costs a driver run, and the refusal is kept for the journal and the result (`checks_at` also keeps the
model's holes out of those functions). A candidate whose only change is an early `return` guard makes the
function do nothing on that path: it is tried after the others of its batch, so that one that keeps the
function working wins when both are green. A candidate that reads a name nothing can have bound where it reads
it (analysis/unbound.py: a name swapped for a local assigned further down, a parameter of another
function) can only raise NameError or UnboundLocalError there: it is dropped too, counted (`unbound`), not
noted one by one. The search's own candidates, its second edits and each batch of the model's fills pass
through the same screen.
"""

from __future__ import annotations

import ast
import contextlib
import re
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.analysis.swallowing import REFUSED, WEAKENS_CHECK, assertion_helpers, early_return, swallowing_findings
from agent_core.analysis.unbound import UnboundCheck
from agent_core.search.candidate import Mutant
from agent_core.workspace.shadow import read_exact

_EXITS = re.compile(r"\b(return|break|continue|True)\b")  # what a swallowing construct needs in the new text
# What makes one wherever the new text goes: a `finally:`, an `__exit__`, a bare or broad `except` (one naming
# a narrower type, as the search's `try` templates write, is not broad: analysis/swallowing.py)
_MAKERS = re.compile(r"\b(finally|__exit__|__aexit__)\b|\bexcept\s*:|\bexcept\b[^\n]*\b(Exception|BaseException)\b")
_BARE_RETURN = re.compile(r"^\s*return(\s+None)?\s*$", re.M)
_CHECKS = re.compile(r"\b(?:self|cls)\.assert|\bpytest\.fail\b|\bAssertionError\b")  # a file that may
# hold an assertion helper (the rest are not parsed for them)


class Screen:
    """Keeps the candidates that do not swallow the tests' errors of `types`, noting the others (`refused`)."""

    def __init__(self, root: Path, types: list[str]) -> None:
        self.root, self.types = root, types
        self.sources: dict[str, str | None] = {}
        self.parsed: dict[str, tuple[list[tuple[int, int]], list[tuple[int, int]]]] = {}
        self.helpers: dict[str, list[tuple[int, int, str, str]]] = {}
        self.refused: list[str] = []
        self.unbound = 0  # candidates dropped for reading a name nothing can have bound there
        self._unbound: dict[str, UnboundCheck] = {}

    def _source(self, path: str) -> str | None:
        if path not in self.sources:
            try:
                self.sources[path] = read_exact(self.root / path)
            except (OSError, UnicodeDecodeError):
                self.sources[path] = None
        return self.sources[path]

    def _parsed(self, path: str, source: str) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
        """(exposed, units) of a file, parsed once: the (first, last) lines of every `finally:` body and
        `__exit__`/`__aexit__`, where a `return`, `break`, `continue` or `True` alone can swallow an exception;
        and of every top-level statement (its decorators included), the unit a candidate is judged in."""
        if path not in self.parsed:
            exposed: list[tuple[int, int]] = []
            units: list[tuple[int, int]] = []
            try:
                tree: ast.Module = pysyntax.parse(source)
            except (SyntaxError, ValueError):
                tree, exposed = ast.Module(body=[], type_ignores=[]), [(1, source.count("\n") + 1)]  # all exposed
            for node in ast.walk(tree):
                body = getattr(node, "finalbody", None)
                if body:
                    exposed.append((body[0].lineno, body[-1].end_lineno or body[-1].lineno))
                elif isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)) and node.name in ("__exit__",
                                                                                                  "__aexit__"):
                    exposed.append((node.lineno, node.end_lineno or node.lineno))
            for node in tree.body:
                decorators = getattr(node, "decorator_list", None) or []
                units.append((min([node.lineno, *(d.lineno for d in decorators)]), node.end_lineno or node.lineno))
            self.parsed[path] = (exposed, units)
        return self.parsed[path]

    def checks_at(self, path: str, first: int, last: int) -> str | None:
        """Why lines `first`..`last` of `path` are the tests' own check (in an assertion helper the project
        ships: analysis/swallowing.py `assertion_helpers`, each file parsed once); None when they are not.
        Most files have no such helper and are not parsed: their text calls no `self.assert*` method,
        `pytest.fail` or `AssertionError`."""
        if path not in self.helpers:
            source = self._source(path)
            found: list[tuple[int, int, str, str]] = []
            if source is not None and _CHECKS.search(source):
                with contextlib.suppress(SyntaxError, ValueError):
                    found = assertion_helpers(pysyntax.parse(source))
            self.helpers[path] = found
        for start, end, name, how in self.helpers[path]:
            if start <= last and first <= end:
                return WEAKENS_CHECK.format(name=name, how=how)
        return None

    def _unit(self, mutant: Mutant, source: str) -> tuple[str, str]:
        """(before, after) of the top-level statement the candidate changes (the whole file when it changes
        module-level lines or several statements): what it adds or removes is counted per function, so the
        rest of the file cannot change the answer, and a 5,600-line module is not parsed twice per candidate
        (0.4 s each: minutes for a search's 1,000 candidates)."""
        changed = mutant.applied(source)
        for first, last in self._parsed(mutant.path, source)[1]:
            if first <= mutant.line and mutant.last <= last:
                lines, after = source.split("\n"), changed.split("\n")
                grown = len(after) - len(lines)
                return "\n".join(lines[first - 1:last]) + "\n", "\n".join(after[first - 1:last + grown]) + "\n"
        return source, changed

    def _swallows(self, mutant: Mutant, source: str) -> str | None:
        # Most candidates cannot swallow anything and are not parsed: their text has no broad `except`, no
        # `finally` or `__exit__`, and a `return`/`break`/`continue`/`True` of theirs lands outside every
        # `finally:` body and `__exit__`.
        cheap = bool(_MAKERS.search(mutant.text)) or bool(_EXITS.search(mutant.text)) and any(
            first <= mutant.last and mutant.line <= last for first, last in self._parsed(mutant.path, source)[0])
        found = swallowing_findings(*self._unit(mutant, source), self.types) if cheap else []
        return found[0][1] if found else None

    def _reads_unbound(self, mutant: Mutant, source: str) -> bool:
        if mutant.path not in self._unbound:
            self._unbound[mutant.path] = UnboundCheck(source, mutant.path)
        return self._unbound[mutant.path].adds(mutant.line, mutant.last, mutant.applied(source))

    def kept(self, mutants: list[Mutant]) -> list[Mutant]:
        """`mutants` without those that swallow the tests' errors or change their checks (each noted in
        `refused`), nor those that read a name nothing can have bound there (counted in `unbound`)."""
        out = []
        for mutant in mutants:
            source = self._source(mutant.path)
            why = self._swallows(mutant, source) if source is not None else None
            check = None if why else self.checks_at(mutant.path, mutant.line, mutant.last)
            if why or check:
                reason = f"{REFUSED}: {why}" if why else f"refused: {check}"
                self.refused.append(f"{mutant.path}:{mutant.line} ({mutant.description}) {reason}")
            elif source is not None and self._reads_unbound(mutant, source):
                self.unbound += 1
            else:
                out.append(mutant)
        return out

    def early_last(self, mutants: list[Mutant]) -> list[Mutant]:
        """`mutants` with those that only add an early `return` after the others (each group in its order)."""
        def only_returns(mutant: Mutant) -> bool:
            source = self._source(mutant.path)
            return bool(source is not None and _BARE_RETURN.search(mutant.text)
                        and early_return(*self._unit(mutant, source)))

        early = {id(m) for m in mutants if only_returns(m)}
        return [m for m in mutants if id(m) not in early] + [m for m in mutants if id(m) in early]

    def __call__(self, mutants: list[Mutant]) -> list[Mutant]:
        """`mutants` kept, early returns last."""
        return self.early_last(self.kept(mutants))
