"""Engine results -> the tools' result models (models.py) and their one-line texts.

The only place that knows both the engine's types and the MCP shapes, as
`lsp_server/convert.py` is for LSP.
"""

from __future__ import annotations

import re

from mcp.types import CallToolResult, TextContent
from pydantic import BaseModel

from agent_core.checks.diagnose import Diagnosis
from agent_core.checks.verify_patch import PatchVerdict
from agent_core.events import PhaseEvent
from agent_core.models import RunResult, TestFailure, TestReport
from agent_core.quickfix import QuickFixOutcome
from mcp_server import models


def result(model: BaseModel, text: str) -> CallToolResult:
    """A tool result: the model as structured content, and a short text for the model reading it."""
    return CallToolResult(content=[TextContent(type="text", text=text)],
                          structured_content=model.model_dump(mode="json"))


def counts(report: TestReport) -> models.TestCounts:
    return models.TestCounts(passed=report.passed, failed=report.failed, errors=report.errors,
                             skipped=report.skipped)


def counts_text(report: TestReport) -> str:
    return f"{report.passed} passed, {report.failed} failed, {report.errors} errors"


def failure(f: TestFailure) -> models.Failure:
    return models.Failure(nodeid=f.nodeid, kind=f.kind, message=f.message, file=f.file, line=f.line,
                          source_file=f.source_file, source_line=f.source_line)


def run_tests(run: RunResult, environment: dict[str, str]) -> CallToolResult:
    report = run.report or TestReport()
    model = models.RunTestsResult(
        ok=report.ok, run_id=run.run_id, tests=counts(report),
        outcomes=[models.TestOutcome(nodeid=n, outcome=o) for n, o in sorted(report.outcomes.items())],
        failures=[failure(f) for f in report.failures],
        environment=models.Environment(backend=report.backend, **environment),
        duration_s=report.duration_s, timed_out=report.timed_out, limit_hit=report.limit_hit,
        output_tail="\n".join(report.output.splitlines()[-20:]),
    )
    names = ", ".join(f.nodeid for f in report.failures[:5])
    text = f"{counts_text(report)} ({report.backend}, Python {environment['python_version']})"
    return result(model, text + (f"; failing: {names}" if names else ""))


def verify_patch(verdict: PatchVerdict) -> CallToolResult:
    report = verdict.report
    model = models.VerifyPatchResult(
        verified=verdict.verified, refused=verdict.refused, tests=counts(report) if report else None,
        failures=[failure(f) for f in report.failures] if report else [],
        changed_outcomes=[models.OutcomeChange(nodeid=c.nodeid, before=c.before, after=c.after)
                          for c in verdict.changed],
        applied=verdict.applied, files=verdict.paths,
        baseline=counts(verdict.baseline) if verdict.baseline else None, apply_error=verdict.apply_error,
    )
    if verdict.refused and report is None:
        text = f"refused: {verdict.refused}"
    else:
        word = "verified" if verdict.verified else "not verified"
        broke = [c.nodeid for c in verdict.changed if c.before == "passed" and c.after != "passed"]
        text = f"{word}: {counts_text(report) if report else ''}"
        text += f"; now failing: {', '.join(broke[:5])}" if broke else ""
        text += f"; {verdict.refused}" if verdict.refused else ""
        if verdict.applied or verdict.apply_error:
            text += "; applied" if verdict.applied else f"; not applied: {verdict.apply_error}"
    return result(model, text)


def localize(diagnosis: Diagnosis) -> CallToolResult:
    where = diagnosis.localization
    suspects = [models.Suspect(file=s.file, function=s.function, start_line=s.start_line, end_line=s.end_line,
                               lines=s.lines, score=round(s.score, 4)) for s in (where.suspects if where else [])]
    model = models.LocalizeResult(tests=counts(diagnosis.report), failing=where.failing if where else [],
                                  evidence=where.evidence if where else None, suspects=suspects)
    if where is None:
        return result(model, f"nothing to localize: {counts_text(diagnosis.report)}")
    top = "; ".join(f"{s.file}:{s.lines[0] if s.lines else s.start_line} {s.function or '<module>'}"
                    for s in suspects[:3])
    return result(model, f"{len(suspects)} suspects by {where.evidence}: {top}")


def quick_fix(report: TestReport, outcome: QuickFixOutcome | None) -> CallToolResult:
    fix = outcome.fix if outcome else None
    if fix is None:
        reason = "the tests pass" if outcome is None else "no single edit makes every test pass"
        model = models.QuickFixResult(found=False, diff=None, change=None, tests=counts(report), reason=reason)
        return result(model, f"none: {reason}")
    model = models.QuickFixResult(found=True, diff=fix.change_set.unified_diff(), change=fix.change, file=fix.file,
                                  line=fix.line, tests=counts(fix.report), baseline=counts(report), reason="")
    return result(model, fix.title)


def progress_text(event: PhaseEvent, message: str | None = None) -> str:
    """A phase's progress message (`message`, by default the event's): "phase: what it does", the phase said once
    (a message that starts with it stands alone: "planning", "coding step 1/2", not "planning: planning",
    "coding: coding step 1/2")."""
    message = (event.message if message is None else message).strip()
    first = re.split(r"[\s:]", message, maxsplit=1)[0]
    return message if first == event.phase else f"{event.phase}: {message}" if message else event.phase


def pipeline(run: RunResult) -> CallToolResult:
    report = run.report
    model = models.PipelineResult(
        run_id=run.run_id, status=run.status, diff=run.change_set.unified_diff(), files=run.change_set.files,
        tests=counts(report) if report else None, failures=[failure(f) for f in report.failures] if report else [],
        summary=run.summary, explanation=run.explanation, error=run.error, iterations=run.iterations,
        llm_calls=run.usage.llm_calls, tokens=run.usage.prompt_tokens + run.usage.completion_tokens,
        duration_s=run.duration_s,
    )
    text = f"{run.status}: {run.summary or run.error or ''}".rstrip(": ")
    return result(model, text)
