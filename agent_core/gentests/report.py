"""The suspected-bug report of a gen-tests run and its one-paragraph summary."""

from __future__ import annotations

from agent_core.gentests.loop import Candidate
from agent_core.gentests.testfile import candidate_text, function_line
from agent_core.models import GenTestsSummary, MutationSummary, TestFailure, TestReport


def bug_report(bugs: list[Candidate], dest: str, final_text: str) -> TestReport:
    """One failure per suspected bug, located in the final test file and at the implicated source line."""
    failures = []
    for cand in bugs:
        failure = cand.failure
        if failure is None:
            continue
        first_line = failure.message.splitlines()[0] if failure.message else cand.reason
        cand_def = function_line(candidate_source(cand), cand.test.name)
        final_def = function_line(final_text, cand.test.name)
        line = final_def + max(0, failure.line - cand_def) if failure.file == cand.file else final_def
        failures.append(
            TestFailure(
                nodeid=f"{dest}::{cand.test.name}",
                file=dest,
                line=line,
                message=f"suspected bug in {cand.target.symbol.qualname}: {first_line}",
                traceback=failure.traceback,
                kind="failure",
                source_file=cand.bug_file,
                source_line=cand.bug_line,
            )
        )
    return TestReport(failed=len(failures), failures=failures)


def candidate_source(cand: Candidate) -> str:
    return candidate_text(cand.split) if cand.split else cand.test.code


def summary_text(found: GenTestsSummary, dest: str) -> str:
    cov = found.coverage
    bugs = len(found.suspected_bugs)
    return (
        f"{found.tests_kept} of {found.tests_written} generated tests kept in {dest}"
        f" ({found.tests_dropped} dropped, {bugs} suspected bug{'s' if bugs != 1 else ''});"
        f" line coverage of the target {cov.before:.1f}% -> {cov.after:.1f}%"
    ) + mutation_text(found.mutation)


def mutation_text(mutation: MutationSummary | None) -> str:
    """`; mutants killed 3 -> 8 of 10 (2 survive)` for the summary, or nothing without a mutation run."""
    if not mutation:
        return ""
    return (f"; mutants killed {mutation.killed_before} -> {mutation.killed_after} of {mutation.mutants}"
            f" ({len(mutation.survivors)} survive)")
