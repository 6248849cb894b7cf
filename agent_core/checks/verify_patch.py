"""Verify another agent's patch: a unified diff applied to a shadow copy, judged by the project's own tests.

`verify_patch` is a front door beside `Engine.run` (the MCP front end's
`verify_patch` tool calls it). It never writes the workspace unless asked
(`apply`) and the diff verified, and then all or nothing through
`apply_change_set`, which refuses a file that changed since the copy was made.

The same protections as a fix run, from the one definition of what judges a
run (`workspace/testfiles.py`): a diff that touches a test file or the test
configuration is refused before anything runs, with the reason; so is a path
outside the project or one the shadow copy leaves out (a skipped folder, a
`.gitignore`d file). Around the patched run the protected files are put back
as the copy found them; one that the patched code changed during its run
(and the unpatched code did not) refuses the verdict.

"Verified" is a fix run's verdict (`testing/verdict.judge`, the one rule):
the patched suite passes, every test that failed at the baseline is
collected again and passes (a skip, an xfail or a vanished test is not a
pass), no test that passed now fails, and the passing count does not drop.
A file the baseline's pytest collected tests from is protected like a test
file, whatever its name. A patch that would pass by swallowing the tests'
errors (pipeline/safety/swallows.py) is refused before its run.
"""

from __future__ import annotations

from collections.abc import Collection
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.checks.diffs import Diff, DiffError, apply_diff, check_diff, read_diff
from agent_core.errors import BadRequest
from agent_core.models import ChangeSet, TestReport
from agent_core.pipeline.safety.swallows import failing_types, swallowing
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import Settings
from agent_core.testing.bounds import verify_bounds
from agent_core.testing.judged import SuiteRun, judged_run
from agent_core.testing.runner import per_test_bound, run_tests
from agent_core.workspace.changeset import ChangeSetConflict, apply_change_set, compute_change_set, is_excluded
from agent_core.workspace.codefiles import change_of, code_only_refusal
from agent_core.workspace.paths import PathRefused, relative_inside
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.testfiles import (
    collected_entries,
    imported_data_entries,
    is_test_config,
    is_test_file,
    restore_protected,
)

NAME_THEM = "a patch changes such a file only when the call names it"
ABSENT = "absent"  # a test's outcome on the side of the comparison that did not collect it


@dataclass(frozen=True)
class OutcomeChange:
    """A test whose outcome differs between the baseline and the patched run."""

    nodeid: str
    before: str
    after: str


@dataclass
class PatchVerdict:
    """What verifying a diff found. `refused` says why it was not run (or why its run cannot count)."""

    verified: bool
    refused: str | None = None
    applied: bool = False  # written to the workspace (asked for, and verified)
    paths: list[str] = field(default_factory=list)
    baseline: TestReport | None = None
    report: TestReport | None = None
    changed: list[OutcomeChange] = field(default_factory=list)
    change_set: ChangeSet = field(default_factory=ChangeSet)
    apply_error: str | None = None


def refusal(rel: str, workspace: Path, shadow: ShadowWorkspace | None = None) -> str | None:
    """Why a diff may not touch `rel`, or None."""
    try:
        rel = relative_inside(workspace, rel)
    except PathRefused:
        return f"{rel} is outside the project"
    if is_test_file(rel):
        return f"{rel} is a test file: a patch cannot change the tests that judge it"
    if is_test_config(rel):
        return f"{rel} configures the test run: a patch cannot change what judges it"
    if is_excluded(rel) or (shadow is not None and shadow.ignored(rel)):
        return f"{rel} is not part of the project's copy (a skipped folder or an ignored file)"
    return None


def outcome_changes(baseline: TestReport, report: TestReport) -> list[OutcomeChange]:
    """Every test whose outcome differs, by node id (failures stand in for a report without per-test outcomes)."""
    before = baseline.outcomes or {f.nodeid: "failed" if f.kind == "failure" else "error" for f in baseline.failures}
    after = report.outcomes or {f.nodeid: "failed" if f.kind == "failure" else "error" for f in report.failures}
    ids = sorted(before.keys() | after.keys())
    return [OutcomeChange(n, before.get(n, ABSENT), after.get(n, ABSENT))
            for n in ids if before.get(n, ABSENT) != after.get(n, ABSENT)]


async def verify_patch(settings: Settings, workspace: Path, text: str, apply: bool = False,
                       named: Collection[str] = ()) -> PatchVerdict:
    """Apply the unified diff `text` to a shadow copy of `workspace`, run the tests before and after, judge.
    A file that is not code is refused unless the caller `named` it (workspace/codefiles.py, every front door's rule).

    BadRequest when the diff cannot be read or does not apply to the project as it is.
    """
    workspace = Path(workspace).resolve()
    with ShadowWorkspace(workspace) as shadow:
        try:
            diff = read_diff(text, shadow.root)
            refused = next((why for p in diff.paths if (why := refusal(p, workspace, shadow))), None) or \
                code_only_refusal(workspace, [change_of(workspace, p) for p in diff.paths], named, NAME_THEM)
            if refused:
                return PatchVerdict(False, refused=refused, paths=list(diff.paths))
            check_diff(diff, shadow.root)  # before the baseline run: a diff that cannot apply costs no tests
        except DiffError as exc:
            raise BadRequest(str(exc)) from exc
        verdict = await _judge(settings, shadow, diff)
        if apply and verdict.verified and verdict.change_set.changes:
            try:
                apply_change_set(workspace, verdict.change_set)
                verdict.applied = True
            except ChangeSetConflict as exc:
                verdict.apply_error = str(exc)
        return verdict


async def _judge(settings: Settings, shadow: ShadowWorkspace, diff: Diff) -> PatchVerdict:
    sandbox = make_sandbox(settings)
    root, command, timeout = shadow.root, settings.test_command, settings.sandbox.timeout_s
    baseline = await run_tests(sandbox, root, command, timeout,
                               test_timeout_s=per_test_bound(None, settings.sandbox.test_timeout_s, timeout))
    by_baseline = set(restore_protected(root, shadow.verification))
    collected = sorted(set(diff.paths) & set(baseline.test_files))
    if collected:  # what the project's pytest collects tests from is a test file, whatever its name
        return PatchVerdict(False, refused=f"{collected[0]} holds tests the project's pytest collects: a patch "
                            "cannot change the tests that judge it", paths=list(diff.paths), baseline=baseline)
    data = sorted(set(diff.paths) & set(imported_data_entries(root, baseline.test_files, shadow.verification)))
    if data:  # the values the tests import are part of the tests
        return PatchVerdict(False, refused=f"{data[0]} holds the values the tests import: a patch cannot change "
                            "the tests that judge it", paths=list(diff.paths), baseline=baseline)
    shadow.verification.update(collected_entries(root, baseline.test_files, shadow.verification))
    for rel in diff.paths:
        shadow.remember(rel)
    try:
        apply_diff(diff, root)
    except DiffError as exc:
        raise BadRequest(str(exc)) from exc
    change_set = compute_change_set(shadow)
    if found := swallowing(change_set, failing_types(baseline)):
        return PatchVerdict(False, refused=f"the patch is {found[0]}", paths=list(diff.paths),
                            baseline=baseline, change_set=change_set)
    run_timeout, bound = verify_bounds(settings, baseline)
    run = await judged_run(SuiteRun(sandbox, root, command, run_timeout, bound), baseline,  # testing/judged.py
                           after=lambda: sorted(set(restore_protected(root, shadow.verification)) - by_baseline))
    verdict = PatchVerdict(run.report.ok, paths=list(diff.paths), baseline=baseline, report=run.report,
                           changed=outcome_changes(baseline, run.raw), change_set=change_set)
    if run.changed:
        verdict.refused = f"the patched code changed {', '.join(run.changed)} during the test run"
    return verdict
