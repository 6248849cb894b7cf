"""Mutation testing of generated tests: a test is kept for the bugs it catches, not the lines it runs.

The targets' lines get single-edit mutants from the fix search's catalogue
(operators, +-1 constants and bounds, negations, swapped arguments, return
variants; the wrong-variable and inserted-base-case classes are left out:
they are mostly equivalent or unrunnable as tests' adversaries). All of them
run in ONE sandboxed pytest process through the search's driver: a child is
forked per mutant, every test's outcome is recorded, each test and each
mutant are time-bounded (a mutant stopped by its bound counts as killed). A
control child runs the original code, so a test that fails anyway never
counts as a kill. Mutants on lines that no test executes cannot be killed:
they are counted as survivors without being run.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.analysis import pysyntax
from agent_core.gentests.driver import CoverageData
from agent_core.sandbox.base import Sandbox
from agent_core.search import Mutant, line_mutants
from agent_core.search import run_driver as run_search_driver

MAX_TIER = 9  # catalogue tiers used: everything up to swapped operands (see search/catalogue/line_mutants.py)
KILLING = ("failed", "timeout")


@dataclass
class MutantOutcome:
    """One mutant and the tests that noticed it (nodeids); `ran` False: its line runs under no test."""

    mutant: Mutant
    ran: bool
    killers: set[str] = field(default_factory=set)


@dataclass
class MutationRun:
    """The outcomes of one mutation run; `stopped` says why the driver ended early (None: all ran)."""

    outcomes: list[MutantOutcome]
    stopped: str | None = None

    def killed_by(self, tests: Iterable[str]) -> set[int]:
        chosen = set(tests)
        return {i for i, o in enumerate(self.outcomes) if o.killers & chosen}

    def mutated_lines(self) -> set[int]:
        return {o.mutant.line for o in self.outcomes}


def statement_lines(source: str, spans: list[tuple[int, int]]) -> list[int]:
    """Lines inside `spans` (1-based, inclusive) that start a statement, docstrings excluded."""
    try:
        tree = pysyntax.parse(source)
    except (SyntaxError, ValueError):
        return []
    out: set[int] = set()
    for node in ast.walk(tree):
        if not isinstance(node, ast.stmt) or not any(a <= node.lineno <= b for a, b in spans):
            continue
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) and isinstance(node.value.value, str):
            continue
        out.add(node.lineno)
    return sorted(out)


def select_mutants(path: str, source: str, lines: list[int], limit: int) -> list[Mutant]:
    """Up to `limit` mutants of `lines`, spread evenly: each line's best mutant first, then each line's second..."""
    per_line = [[m for m in line_mutants(path, source, line) if m.tier <= MAX_TIER] for line in lines]
    out: list[Mutant] = []
    depth = 0
    while len(out) < limit and any(depth < len(ms) for ms in per_line):
        out += [ms[depth] for ms in per_line if depth < len(ms)][: limit - len(out)]
        depth += 1
    return sorted(out, key=lambda m: (m.line, m.tier))


def _control(path: str, source: str, line: int) -> Mutant:
    text = source.split("\n")[line - 1]
    return Mutant(path, line, text, "the original code", -1)


async def run_mutants(
    sandbox: Sandbox, root: Path, test_files: list[str], mutants: list[Mutant], source: str, *,
    covered: set[int] | None, mutant_timeout_s: float, budget_s: float,
) -> MutationRun | None:
    """Run `mutants` against every test of `test_files`; None when the driver gave no usable answer."""
    if not mutants:
        return MutationRun([])
    if not test_files:  # no test at all: every mutant survives, nothing to run
        return MutationRun([MutantOutcome(m, False) for m in mutants])
    runnable = [m for m in mutants if covered is None or m.line in covered]
    control = _control(mutants[0].path, source, mutants[0].line)
    batch = [control, *runnable]
    config = {"mode": "mutants", "per_test": True, "nodeids": test_files, "timeout_s": mutant_timeout_s,
              "test_timeout_s": mutant_timeout_s, "budget_s": budget_s, "max_passing": len(batch) + 1,
              "mutants": [{"id": i, "path": m.path, "line": m.line, "text": m.text} for i, m in enumerate(batch)]}
    data = await run_search_driver(sandbox, root, config, timeout_s=budget_s + 2 * mutant_timeout_s + 60)
    if data is None or not data.get("results") or data["results"][0]["id"] != 0:
        return None
    results = {r["id"]: r for r in data["results"]}
    sound = {t for t, outcome in results[0].get("tests", {}).items() if outcome == "passed"}
    if not sound:
        return None  # the tests do not pass on the original code: nothing can be judged
    outcomes: list[MutantOutcome] = []
    for index, mutant in enumerate(batch[1:], start=1):
        result = results.get(index)
        if result is None:
            continue  # not reached within the budget
        tests = result.get("tests", {})
        killers = {t for t in sound if tests.get(t) in KILLING}
        if not killers and result["outcome"] != "passed" and not (set(tests) & sound):
            killers = set(sound)  # the mutated module broke collection or import: every test notices
        outcomes.append(MutantOutcome(mutant, True, killers))
    ran = {id(o.mutant) for o in outcomes}
    outcomes += [MutantOutcome(m, False) for m in mutants if m not in runnable and id(m) not in ran]
    outcomes.sort(key=lambda o: (o.mutant.line, o.mutant.tier))
    return MutationRun(outcomes, data.get("stopped"))


def covered_lines(coverage: CoverageData | None) -> set[int] | None:
    """Every line any test (or the import) ran, or None when unknown."""
    if coverage is None or not coverage.statements:  # not measured (imported under another path): unknown
        return None
    return {line for data in coverage.contexts.values() for line in data["lines"]}


def survivor_text(mutant: Mutant, source: str, ran: bool = True) -> str:
    """`line 12: if x < lo:  ->  if x <= lo:` for the model's prompt; a line no test runs says so (the test
    must first reach it)."""
    before = source.split("\n")[mutant.line - 1].strip()
    reach = "" if ran else "; no test runs this line yet"
    return f"line {mutant.line}: `{before}` becomes `{mutant.text.strip()}` ({mutant.description}{reach})"


def block(path: str, run: MutationRun, killed_before: set[int], killed_after: set[int]) -> dict:
    """The result's `mutation` block."""
    return {
        "mutants": len(run.outcomes),
        "killed_before": len(killed_before),
        "killed_after": len(killed_after),
        "not_run": sum(not o.ran for o in run.outcomes),
        "stopped": run.stopped,
        "survivors": [{"file": path, "line": o.mutant.line, "change": o.mutant.description, "text": o.mutant.text}
                      for i, o in enumerate(run.outcomes) if i not in killed_after],
    }
