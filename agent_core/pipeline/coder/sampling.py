"""Sample and verify: several coder answers per round, the tests pick.

A small model often hands the code back unchanged or half-fixed; asked
several times at spread temperatures it is far more often right once. The
test suite is the oracle: each distinct candidate is applied to the shadow and
run against the failing tests only (their node ids), then, if they pass, the
whole suite; the first candidate that passes everything is kept and the round
is fixed. The rest are undone and become the "tried" notes of the next round.

Candidates are compared by the normalised AST (`ast.dump`) of the files they
change: an answer that changes nothing, or one equal to an earlier one up to
formatting and comments, is not tested. A single distinct candidate is not
pre-tested at all: the graph's gate and test nodes test it as before.

A candidate the safety gate would question (pipeline/nodes/gate.py) is
never run here unless safety is "allow"; with no passing candidate it is
handed to the gate node like any answer.
"""

from __future__ import annotations

import ast
from dataclasses import dataclass, field
from typing import Any

from agent_core.agents.coder.schema import CoderOutput
from agent_core.analysis import pysyntax
from agent_core.models import TestReport
from agent_core.pipeline.attempts import outcome, score, tried_note
from agent_core.pipeline.checkpoint import rewind_shadow, shadow_files
from agent_core.pipeline.deps import RunDeps
from agent_core.pipeline.safety.scan import scan_change_set
from agent_core.pipeline.testrun import run_checked
from agent_core.workspace.changeset import compute_change_set

MAX_TEMPERATURE = 0.9  # the warmest sample of a round
MAX_NODE_IDS = 50  # more failing tests than this: the candidates run the whole suite at once
SUBSET_FACTOR = 5  # a candidate's failing-tests run may take this many times the baseline's whole suite
SUBSET_MIN_S = 20.0


def temperatures(base: float, k: int) -> list[float]:
    """k temperatures from the round's `base` up to MAX_TEMPERATURE (0.2, 0.55, 0.9 for k=3 at 0.2)."""
    top = max(base, MAX_TEMPERATURE)
    if k == 1:
        return [base]
    return [round(base + (top - base) * i / (k - 1), 2) for i in range(k)]


@dataclass
class Candidate:
    """One answer of the sampled step, as applied to the shadow."""

    index: int
    temperature: float
    output: CoderOutput | None
    applied: int = 0
    errors: list[str] = field(default_factory=list)
    files: dict[str, str | None] = field(default_factory=dict)  # shadow_files with it applied
    diff: str = ""
    verdict: str = ""  # unusable | no-op | duplicate | gate | failing-tests | suite | rigged | passed
    report: TestReport | None = None  # its last test run
    full: bool = False  # that run was the whole suite
    tokens: int = 0  # its share of the sampling requests' tokens
    rigged: bool = False  # a verifying run had to put back the files that judge it


def _normal(text: str | None, rel: str) -> str:
    if text is None or not rel.endswith(".py"):
        return repr(text)
    try:
        return ast.dump(pysyntax.parse(text))
    except SyntaxError:
        return text


def _key(deps: RunDeps) -> tuple[tuple[str, str], ...]:
    """The shadow's change up to formatting: normalised AST of every file that differs from the original."""
    key = []
    for rel, text in shadow_files(deps.shadow).items():
        now = _normal(text, rel)
        if now != _normal(deps.shadow.originals.get(rel), rel):
            key.append((rel, now))
    return tuple(key)


def _failing_ids(deps: RunDeps, report: TestReport | None) -> list[str]:
    ids = list(dict.fromkeys(f.nodeid for f in (report.failures if report else []) if f.nodeid))
    return ids if 0 < len(ids) <= MAX_NODE_IDS else []  # selected by our pytest plugin, whatever wraps pytest


def subset_timeout(deps: RunDeps, baseline: TestReport | None) -> float:
    """Seconds a candidate's run of the failing tests may take: SUBSET_FACTOR times the baseline's whole
    suite, at least SUBSET_MIN_S, at most the sandbox timeout. A candidate that loops forever (a
    common wrong answer) then costs seconds, not the sandbox timeout, times k."""
    whole = baseline.duration_s if baseline and not baseline.timed_out else deps.settings.sandbox.timeout_s
    return min(deps.settings.sandbox.timeout_s, max(SUBSET_MIN_S, SUBSET_FACTOR * whole))


async def _run(deps: RunDeps, cand: Candidate, baseline: TestReport | None, select: list[str],
               timeout_s: float | None = None) -> TestReport:
    """One verifying run of `cand` (pipeline/testrun.py); a candidate that touched what judges it is refused."""
    report, undone = await run_checked(deps, baseline, select=select, timeout_s=timeout_s)
    if undone:
        cand.errors = [*cand.errors, *undone]
        cand.rigged = True
    return report


def _gated(deps: RunDeps) -> bool:
    if deps.settings.safety == "allow":
        return False
    return bool(scan_change_set(compute_change_set(deps.shadow), str(deps.request.workspace.resolve())))


async def _check(deps: RunDeps, cand: Candidate, ids: list[str], bound: float, baseline: TestReport | None) -> None:
    """Test one applied candidate: the failing tests (within `bound` seconds), then (if they pass) the suite."""
    if _gated(deps):
        cand.verdict = "gate"
        return
    if ids:
        cand.report = await _run(deps, cand, baseline, ids, bound)
        if not cand.report.ok or cand.rigged:
            cand.verdict = "rigged" if cand.rigged else "failing-tests"
            return
    cand.report, cand.full = await _run(deps, cand, baseline, []), True
    cand.verdict = "rigged" if cand.rigged else ("passed" if cand.report.ok else "suite")


def _result(cand: Candidate) -> str:
    assert cand.report is not None
    if cand.verdict == "suite":
        return f"the failing tests passed, but the whole suite did not: {outcome(cand.report)}"
    return outcome(cand.report)


@dataclass
class StepResult:
    """What a sampled step leaves: the candidate left applied (None: the start), its whole-suite report when it
    ran one, notes on the tested candidates that were not chosen, and the tool errors the next prompt hears."""

    chosen: Candidate | None
    checked: TestReport | None
    tried: list[str]
    errors: list[str]


class Sampler:
    """The candidates of one step: applied from the same start, deduplicated, tested in order."""

    def __init__(self, deps: RunDeps, report: TestReport | None, round_: int, apply: Any,
                 baseline: TestReport | None = None) -> None:
        self.deps, self.round, self.apply = deps, round_, apply  # apply(output) -> (applied, errors)
        self.bound = subset_timeout(deps, baseline)
        self.baseline = baseline
        self.base = shadow_files(deps.shadow)
        self.start = _key(deps)
        self.seen = {self.start}
        self.ids = _failing_ids(deps, report)
        self.all: list[Candidate] = []
        self.tested: list[Candidate] = []
        self.gated: list[Candidate] = []

    def add(self, cands: list[Candidate]) -> list[Candidate]:
        """Apply each new answer from the start; journal and drop the unusable, no-op and duplicate ones.

        Returns the distinct ones; the shadow is left at the start.
        """
        distinct = []
        for cand in cands:
            self.all.append(cand)
            rewind_shadow(self.deps.shadow, self.base)
            if cand.output is None:
                cand.verdict = "unusable"
                cand.errors = cand.errors or ["- the answer held no ```python block and no JSON edits"]
            else:
                cand.applied, cand.errors = self.apply(cand.output)
                key = _key(self.deps)
                if key in self.seen:
                    cand.verdict = "no-op" if key == self.start else "duplicate"
                else:
                    self.seen.add(key)
                    cand.files = shadow_files(self.deps.shadow)
                    cand.diff = compute_change_set(self.deps.shadow).unified_diff()
                    distinct.append(cand)
            if cand.verdict:
                journal_candidate(self.deps, cand, self.round)
        rewind_shadow(self.deps.shadow, self.base)
        return distinct

    def leave(self, cand: Candidate | None, verdict: str) -> None:
        """Leave `cand` (untested here) applied for the gate and test nodes, or the start."""
        rewind_shadow(self.deps.shadow, cand.files if cand else self.base)
        if cand is not None:
            cand.verdict = verdict
            journal_candidate(self.deps, cand, self.round)

    async def check(self, cand: Candidate) -> bool:
        """Test one distinct candidate; True (left applied) when it passes everything."""
        rewind_shadow(self.deps.shadow, cand.files)
        await _check(self.deps, cand, self.ids, self.bound, self.baseline)
        journal_candidate(self.deps, cand, self.round)
        if cand.verdict == "passed":
            return True
        (self.gated if cand.verdict == "gate" else self.tested).append(cand)
        rewind_shadow(self.deps.shadow, self.base)
        return False

    def finish(self, winner: Candidate | None) -> StepResult:
        """The step's result; with no winner the best tested candidate (else a gated one) is left applied for
        the test node."""
        chosen = winner or _handed(self.tested, self.gated)
        rewind_shadow(self.deps.shadow, chosen.files if chosen else self.base)
        notes = [tried_note(c.diff, _result(c)) for c in self.tested if c is not chosen]
        checked = chosen.report if chosen is not None and chosen.full else None
        return StepResult(chosen, checked, notes, self.errors(chosen))

    def errors(self, chosen: Candidate | None) -> list[str]:
        """The tool errors the next prompt hears: the chosen answer's, else the first answer's."""
        if chosen is not None:
            return chosen.errors
        return self.all[0].errors if self.all else []


def _handed(tested: list[Candidate], gated: list[Candidate]) -> Candidate | None:
    """With no winner: the candidate the test node gets (the best tested one, else one for the gate)."""
    if tested:
        return min(tested, key=lambda c: (c.verdict != "suite", score(c.report)))  # type: ignore[arg-type]
    return gated[0] if gated else None


def journal_candidate(deps: RunDeps, cand: Candidate, round_: int) -> None:
    """One `candidate` journal record: its diff, verdict and test figures."""
    r = cand.report
    tests = {"passed": r.passed, "failed": r.failed, "errors": r.errors, "whole_suite": cand.full,
             "timed_out": r.timed_out, "duration_s": round(r.duration_s, 2)} if r else None
    deps.journal.write("candidate", round=round_, index=cand.index, temperature=cand.temperature,
                       verdict=cand.verdict, edits_applied=cand.applied, errors=cand.errors, diff=cand.diff,
                       tests=tests, tokens=cand.tokens)
