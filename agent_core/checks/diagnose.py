"""Where a failure comes from, and a zero-token fix for it: the fix pipeline's first steps as calls of their own.

Front doors beside `Engine.run` for front ends that offer them one at a time
(the MCP server's `localize` and `quick_fix` tools). Each runs the project's
tests once in the sandbox on a shadow copy, then reuses the engine's own
steps: `search.localize` (coverage spectrum, traceback)
and `quickfix.find_quick_fix` (the single-edit mutant search, verified on the
whole suite). Neither writes the workspace nor calls a model (unless the user
turned on `search.background_model_round`). `project_environment` says which
interpreter the sandbox runs a project's tests with.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from agent_core import search
from agent_core.models import TestReport
from agent_core.quickfix import QuickFixOutcome, find_quick_fix
from agent_core.sandbox.base import Sandbox
from agent_core.sandbox.environment import detect_environment
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import Settings
from agent_core.testing.runner import per_test_bound, run_tests
from agent_core.workspace.shadow import ShadowWorkspace


@dataclass
class Diagnosis:
    """The baseline test report, and where its failure was localized (None when every test passed)."""

    report: TestReport
    localization: search.Localization | None


async def _baseline(settings: Settings, sandbox: Sandbox, root: Path) -> TestReport:
    timeout = settings.sandbox.timeout_s
    bound = per_test_bound(None, settings.sandbox.test_timeout_s, timeout)
    return await run_tests(sandbox, root, settings.test_command, timeout, test_timeout_s=bound)


async def localize(settings: Settings, workspace: Path) -> Diagnosis:
    """Run the tests; when some fail, rank the suspicious functions and lines with their evidence."""
    sandbox = make_sandbox(settings)
    with ShadowWorkspace(Path(workspace).resolve()) as shadow:
        report = await _baseline(settings, sandbox, shadow.root)
        if report.ok or not report.failures:
            return Diagnosis(report, None)
        where = await search.localize(search.Collaborators(settings, sandbox, shadow, run_tests), report)
        return Diagnosis(report, where)


async def quick_fix(settings: Settings, workspace: Path) -> tuple[TestReport, QuickFixOutcome | None]:
    """Run the tests; when some fail, search single-edit fixes. (baseline, the search's outcome or None)."""
    sandbox = make_sandbox(settings)
    with ShadowWorkspace(Path(workspace).resolve()) as shadow:
        report = await _baseline(settings, sandbox, shadow.root)
    if report.ok or not report.failures:
        return report, None
    return report, await find_quick_fix(settings, Path(workspace).resolve(), {}, report, nice=False)


def project_environment(settings: Settings, workspace: Path) -> dict[str, str]:
    """The interpreter the sandbox runs `workspace`'s tests with: kind, path, version, and why it was chosen."""
    env = detect_environment(Path(workspace).resolve(), settings.sandbox.python)
    return {"kind": env.kind, "interpreter": str(env.python),
            "python_version": ".".join(map(str, env.interpreter.version)), "reason": env.reason}
