"""The zero-token search for a fix: localize a failing test run's fault, then try candidate edits in the sandbox.

The front door is `localize` and `find_fix` (front.py), and the search's time, `search_budget_s` (and the suite's
time it counts from, `unhung_duration`). Inside, by
layer (bottom to top; each imports only from lower ones, tests/architecture checks it):

- candidate.py, linetext.py, twins.py: the candidate shape (`Edit`, `Mutant`), where an ast node sits in a line,
  and a line's copies (a candidate made at them too);
- evidence/: what a failing run says (the coverage spectrum, hung tests, the failing tests' inputs);
- catalogue/ and templates/: the candidates, one-line mutants and multi-line templates, beside each other;
- driver/: the host side of trying them (localizing, ranking, sandboxed driver runs, pairs, steps, rivals);
- front.py, this package: the front door.

inside/ holds the scripts copied into the sandbox; they import nothing of agent_core.

Other packages import the search only from here. The names re-exported beyond the front door are what other
tools reuse: the candidate shape and the one-line catalogue (gentests' mutation testing runs them through the
sandboxed driver, `run_driver`), the line recorder the `sandbox` command reports on, and the failing tests'
literals the safety gate compares a change with, and the model's fills of one hole with the holes cut and shown
(bench/infill_probe.py, infill_at_author.py and infill_shown.py measure them alone).
"""

from agent_core.search.candidate import Edit, Mutant
from agent_core.search.catalogue.line_mutants import line_mutants
from agent_core.search.driver.describe import describe_change
from agent_core.search.driver.interleave import is_infill
from agent_core.search.driver.localizing import Localization, SearchDeps
from agent_core.search.driver.sandboxed import line_recorder, run_driver
from agent_core.search.evidence.hangs import unhung_duration
from agent_core.search.evidence.inputs import failing_literals, failing_types, literal, seen_exceptions
from agent_core.search.evidence.spectrum import Suspect
from agent_core.search.front import (
    Collaborators,
    SearchOutcome,
    SearchStats,
    find_fix,
    localize,
    search_budget_s,
)
from agent_core.search.infill import (
    INFILL_ACCOUNT,
    Hole,
    InfillOptions,
    failing_tests_code,
    holes_at,
    infill_hole,
    shown,
)

__all__ = [
    "INFILL_ACCOUNT",
    "Hole",
    "InfillOptions",
    "failing_tests_code",
    "holes_at",
    "infill_hole",
    "Collaborators",
    "Edit",
    "Localization",
    "Mutant",
    "SearchDeps",
    "SearchOutcome",
    "SearchStats",
    "Suspect",
    "describe_change",
    "failing_literals",
    "failing_types",
    "find_fix",
    "is_infill",
    "line_mutants",
    "line_recorder",
    "literal",
    "localize",
    "run_driver",
    "search_budget_s",
    "seen_exceptions",
    "shown",
    "unhung_duration",
]
