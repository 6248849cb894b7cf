"""A line's twins, and a one-line candidate made at them too.

The twins of a line are the other lines of the same function (its innermost one) whose text, less its
indentation, is the same: copied code, as pyparsing's `Word.__init__` has `if max == 0:` twice (its author's
fix adds the same clause to both). Copies that need the same change are a common kind of multi-hunk bug, the
"sibling" hunks that Saha, Saha and Prasad ("Harnessing evolution for multi-hunk program repair", ICSE 2019)
repair with one edit each; a candidate at one copy cannot pass a test that runs both. So after a candidate
that rewrites a line with twins as one line, the search tries the same rewrite at every twin too (the model's
fills, infill/samples.py, and the catalogue's one-line mutants, driver/single_edit.py `candidates`).

A line with fewer than TWIN_WORDS names and numbers (`return x`, `else:`) has no twins, nor one with more
than MAX_TWINS copies (boilerplate, not a copy of one piece of logic), nor one outside any function. Copies
in one function keep the candidate inside it, where the driver swaps it into the live function (a candidate
over two methods would be tried the slow way, a test process of its own).
"""

from __future__ import annotations

import ast
import keyword
import re
from collections import defaultdict

from agent_core.analysis import pysyntax
from agent_core.search.candidate import Mutant

MAX_TWINS = 3  # a line with more copies than this in its definition is boilerplate: no twin candidate
TWIN_WORDS = 2  # names and numbers a line needs (besides keywords) for its copies to be twins
_WORD = re.compile(r"[A-Za-z_]\w*|\d+")
_FUNCTIONS = (ast.FunctionDef, ast.AsyncFunctionDef)


def _worth(text: str) -> bool:
    return len([w for w in _WORD.findall(text.split("#")[0]) if not keyword.iskeyword(w)]) >= TWIN_WORDS


class Twins:
    """The twins of every line of one source, found in one parse (none when it does not parse)."""

    def __init__(self, source: str) -> None:
        self.lines = source.split("\n")
        self._of: dict[int, list[int]] = {}
        try:
            tree = pysyntax.parse(source)
        except (SyntaxError, ValueError, RecursionError):
            return
        owner: dict[int, int] = {}  # line -> its innermost function (an outer one is walked first)
        for node in ast.walk(tree):
            if isinstance(node, _FUNCTIONS):
                for number in range(node.lineno, (node.end_lineno or node.lineno) + 1):
                    owner[number] = id(node)
        copies: dict[tuple[int, str], list[int]] = defaultdict(list)
        for number, function in sorted(owner.items()):
            text = self.lines[number - 1].strip()
            if text and _worth(text):
                copies[(function, text)].append(number)
        for group in copies.values():
            if 2 <= len(group) <= MAX_TWINS + 1:
                for number in group:
                    self._of[number] = [n for n in group if n != number]

    def of(self, line: int) -> list[int]:
        """The twins of line `line` (1-based), in line order; [] when it has none."""
        return list(self._of.get(line, []))

    def made_at(self, mutant: Mutant) -> Mutant | None:
        """`mutant` made at its line's twins too, each at its own indentation: one candidate over the lines from
        the first to the last of them; None when it is not one line rewritten as one line or the line has no
        twins."""
        twins = self.of(mutant.line)
        if not twins or mutant.last != mutant.line or "\n" in mutant.text:
            return None
        edited = list(self.lines)
        new = mutant.text.strip()
        for number in [mutant.line, *twins]:
            old = self.lines[number - 1]
            edited[number - 1] = old[: len(old) - len(old.lstrip(" \t"))] + new
        lo, hi = min(mutant.line, *twins), max(mutant.line, *twins)
        where = ", ".join(str(n) for n in twins)
        return Mutant(mutant.path, lo, "\n".join(edited[lo - 1 : hi]),
                      f"{mutant.description} (and at its twin line{'s' if len(twins) > 1 else ''} {where})",
                      mutant.tier, hi, mutant.concerns)


def twin_lines(source: str, line: int) -> list[int]:
    """The twins of line `line` (1-based) of `source` (see the module)."""
    return Twins(source).of(line)
