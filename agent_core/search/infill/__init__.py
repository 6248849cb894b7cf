"""The model as a source of the search's candidates: short infills at the suspect lines.

A small code model cannot rewrite a function, but it can write one line between
the code before and after it. This package cuts holes around the localization's
suspect lines, asks the model for many short samples per hole (fill-in-the-middle
where the endpoint takes it, a chat prompt otherwise) and turns each sample that
parses and changes something into a `Mutant`, verified by the search's driver
like any other candidate.

- holes.py: `holes_at(path, source, line) -> list[Hole]` (the line with its old text shown
  above it and hidden, a clause added to its condition, its statement, empty slots after and
  before it, its enclosing block of up to 8 lines, a slot after that block) and
  `suspect_holes(suspects, sources, *, max_suspects=3, lines_per_suspect=2) -> list[Hole]`
  (the suspects' best lines, best first, each place once); `shown(hole)`: a replaced hole with
  its old text as comment lines above it;
- tests_code.py: `failing_tests_code(root, failing)`: the failing tests' own code, shown
  to the model beside the hole;
- prompt.py: `build_prompt(hole, spec, failure=None, tests=()) -> InfillPrompt` for the
  endpoint's dialect (llm/fim.py's `FimSpec`, from `LLMClient.fim_spec(role)`);
- samples.py: `sample_plan`, `fit` (a sample cut to the hole and re-indented) and `Sampler`
  (spliced, parsed, deduplicated: `Mutant`s with tier `INFILL_TIER`);
- turned.py: `negated(condition)` and `turned_round(hole, lines)`: a condition the model wrote
  (a clause, a guard) negated, the Sampler's second candidate after the answer's own;
- generate.py: the entry points.

The seam for the search driver::

    holes = suspect_holes(suspects, sources)            # localize.rank's Suspects, {rel path: text}
    async for report in infill_holes(llm, holes, sources, InfillOptions(samples=10)):
        verify(report.mutants)                          # like the catalogue's mutants; stop at the first right one
        journal(report.as_dict())                       # hole, drawn, answered, kept, tokens, seconds, error

`infill_holes` yields one `HoleReport` per hole as soon as its samples are in, so the
driver can interleave holes with the template search by rank and stop early; an
endpoint that fails or a spent budget ends the iteration with the reason in the
report (`error`, `stopped`), never an exception. The calls are accounted under
`INFILL_ACCOUNT` ("infill") with the borrowed role's model.
"""

from agent_core.search.infill.generate import (
    INFILL_ACCOUNT,
    HoleFiller,
    HoleReport,
    InfillOptions,
    infill_candidates,
    infill_hole,
    infill_holes,
)
from agent_core.search.infill.holes import Hole, holes_at, place_holes, shown, spread_holes, suspect_holes
from agent_core.search.infill.samples import INFILL_TIER
from agent_core.search.infill.tests_code import failing_tests_code

__all__ = [
    "INFILL_ACCOUNT",
    "INFILL_TIER",
    "Hole",
    "HoleFiller",
    "HoleReport",
    "InfillOptions",
    "holes_at",
    "failing_tests_code",
    "infill_candidates",
    "infill_hole",
    "infill_holes",
    "place_holes",
    "shown",
    "spread_holes",
    "suspect_holes",
]
