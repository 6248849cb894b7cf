"""Verifying a fix of another tool's diagnostic by running that tool again (ruff, flake8, mypy, pyright).

When the run was asked on diagnostics whose `[source]` names a known tool
(`testing/linters.py`), every verdict run (`pipeline/testrun.py run_checked`)
also runs that tool in the sandbox on the target file and the changed Python
files, and folds what it still finds into the test report as failures (node
id `<tool>::<file>::<code>`, located at the finding). The first run (the
baseline) records the findings as the run found them; after a change a
finding counts against the candidate when

- it is one the user pointed at (same file, rule and message as a finding a
  diagnostic names) and is still there, or
- it is new: more findings of that file, rule and message than the baseline
  had, in a file the baseline checked.

So a candidate that leaves the ruff finding (or trades it for another) is
not accepted, whatever the tests say; the tests must pass as well. The tool
runs as the sandbox's Python's module (the project's own version and
configuration), else, for ruff (one static binary; in agentls' dev extra), as
agentls' own copy placed in the shadow's `.agentls/tools/`; a tool neither
has is reported once and left out: the tests alone judge then.
"""

from __future__ import annotations

import shutil
import sys
from collections import Counter
from pathlib import Path

from agent_core.models import TestFailure, TestReport
from agent_core.pipeline.deps import RunDeps, ToolBaseline
from agent_core.sandbox.base import CommandResult
from agent_core.testing.linters import (
    Finding,
    diagnostic_tools,
    not_installed,
    parse_findings,
    pointed_at,
    tool_argv,
)

TOOL_TIMEOUT_S = 120.0
SELF_CONTAINED = ("ruff",)  # tools that are one executable: agentls' copy runs anywhere


def checked_tools(deps: RunDeps) -> list[str]:
    """The tools this run's verdicts re-run (none when the setting is off)."""
    return diagnostic_tools(deps.request.diagnostics) if deps.settings.verify.tool_recheck else []


def _files(deps: RunDeps) -> list[str]:
    files = [deps.request.target_file] if deps.request.target_file else []
    files += [rel for rel in sorted(deps.shadow.originals) if rel.endswith((".py", ".pyi"))]
    return [rel for rel in dict.fromkeys(files) if deps.shadow.resolve(rel).is_file()]


def _own_copy(deps: RunDeps, tool: str) -> str | None:
    """agentls' own ruff (a single static binary, in the dev extra) copied into the shadow's .agentls/ so any
    sandbox backend can run it; None for another tool or when agentls has none (they need their packages)."""
    found = Path(sys.executable).parent / tool
    if tool not in SELF_CONTAINED or not found.is_file():
        return None
    target = deps.shadow.root / ".agentls" / "tools" / tool
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(found, target)
    return target.relative_to(deps.shadow.root).as_posix()


async def _run_tool(deps: RunDeps, tool: str, files: list[str]) -> CommandResult | None:
    """The tool's run through the sandbox's Python, else agentls' own copy; None when neither has it."""
    memo = deps.toolcheck
    argv = tool_argv(tool, deps.sandbox.python, files)
    if memo.runner.get(tool):
        argv = [f"./{memo.runner[tool]}", *argv[3:]]  # [python, "-m", tool, *args] -> [tool, *args]
    result = await deps.sandbox.run(argv, deps.shadow.root, timeout_s=TOOL_TIMEOUT_S)
    if not not_installed(result.stdout + "\n" + result.stderr, tool) and result.exit_code not in (126, 127):
        return result
    if memo.runner.get(tool):
        return None
    own = _own_copy(deps, tool)
    if own is None:
        return None
    memo.runner[tool] = own
    return await _run_tool(deps, tool, files)


async def _findings(deps: RunDeps, tool: str, files: list[str]) -> list[Finding] | None:
    """The tool's findings on `files` in the sandbox; None when it is not installed or its output unreadable."""
    result = await _run_tool(deps, tool, files)
    if result is None:
        deps.notice(f"{tool} is not installed for the sandbox's Python nor for agentls: the fix of its diagnostic "
                    "is judged by the tests alone", "warning")
        return None
    try:
        return parse_findings(tool, result.stdout, deps.shadow.root)
    except ValueError as exc:
        deps.notice(f"{exc}; the tests alone judge the fix", "warning")
        return None


def _against(found: list[Finding], before: ToolBaseline) -> list[Finding]:
    """The findings that count against the candidate (module docstring)."""
    baseline, targeted = before.counts, before.targeted
    now = Counter(f.key for f in found)
    out = []
    for key, count in now.items():
        allowed = baseline[key] - targeted[key] if key in targeted else (
            baseline[key] if key[0] in before.files else count)
        extra = count - max(0, allowed)
        if extra > 0:
            out.extend([f for f in found if f.key == key][-extra:])
    return out


def _failure(f: Finding) -> TestFailure:
    code = f.code or "finding"
    return TestFailure(nodeid=f"{f.tool}::{f.file}::{code}", file=f.file, line=f.line,
                       message=f"[{f.tool}] {code} {f.message}".strip(), source_file=f.file, source_line=f.line)


async def recheck(deps: RunDeps, report: TestReport) -> TestReport:
    """`report` with the tools' remaining findings added as failures (the report itself when none is checked)."""
    tools = checked_tools(deps)
    memo = deps.toolcheck
    failures: list[TestFailure] = []
    for tool in [t for t in tools if t not in memo.missing]:
        files = _files(deps)
        found = await _findings(deps, tool, files) if files else []
        if found is None:
            memo.missing.add(tool)
            continue
        before = memo.baseline.get(tool)
        if before is None:  # the first verdict run is the baseline: what the user pointed at is what must go
            targeted = [f for f in found if pointed_at(f, deps.request.diagnostics)]
            before = memo.baseline[tool] = ToolBaseline(Counter(f.key for f in found), set(files),
                                                        Counter(f.key for f in targeted))
            counted = targeted
        else:
            counted = _against(found, before)
        deps.journal.write("tool_check", tool=tool, files=files, findings=len(found),
                           counted=[f"{f.file}:{f.line} {f.code} {f.message}" for f in counted])
        failures += [_failure(f) for f in counted]
    if not failures:
        return report
    return report.model_copy(update={"failed": report.failed + len(failures),
                                     "failures": [*report.failures, *failures]})
