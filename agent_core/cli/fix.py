"""`agentls fix [PATH]`: plan, code, test in a sandbox and reflect until the tests pass.

Without --apply the diff goes to stdout (coloured on a terminal: cli/style.py)
and nothing is written; with --apply the verified change set is written to
PATH (all or nothing, git-aware: cli/apply.py). PATH defaults to `.`;
`--set KEY=VALUE` overrides any setting. The end message on stderr gives the
tokens spent (and the cost when settings price the model) and the journal's
path. With --json the last stdout line is one JSON object (see docs/cli.md),
printed whatever happens. Exit codes: 0 fixed (or the tests already pass),
1 unfixed (or its token or time budget spent), 2 bad input, bad configuration, an
unreachable endpoint, or a change that could not be applied.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_core.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, interrupt, jsonout
from agent_core.cli.apply import add_apply_options, apply_result, precheck
from agent_core.cli.options import add_path, add_set, overrides, project_path
from agent_core.cli.progress import TerminalHooks
from agent_core.cli.style import wants_color, write_diff, write_line
from agent_core.llm.usage import usage_text
from agent_core.models import RunRequest, RunResult
from agent_core.settings import Settings, SettingsError, load_settings

_TWO = {"unavailable", "config", "bad_input"}
STATUSES = ("fixed", "unfixed", "passed", "error", "budget_spent")  # what --json's status may say


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("fix", help="fix failing tests (or reach --goal) and show or apply the change")
    add_path(p)
    p.add_argument("--goal", help="what to achieve (default: make the failing tests pass)")
    p.add_argument("--hint", help="a steer for the planner and coder, e.g. 'the bug is in parse_date's year handling'")
    p.add_argument("--test-cmd", dest="test_cmd", help="test command run in the sandbox (default: pytest)")
    p.add_argument("--max-iterations", dest="max_iterations", type=int, help="code/test rounds (default 3)")
    p.add_argument("--samples", type=int, help="coder answers drawn and tested per round (default 3)")
    add_run_options(p)
    p.set_defaults(func=run)


def add_run_options(p: argparse.ArgumentParser) -> None:
    """Options every engine-running command shares (fix, run, resume): endpoint, --apply, --json, --set."""
    p.add_argument("--base-url", dest="base_url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--model", help="model name sent to the endpoint")
    add_apply_options(p)
    p.add_argument("--allow-unsafe", dest="allow_unsafe", action="store_true",
                   help="test and apply changes the safety gate flags")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last stdout line")
    add_set(p)


def run(args: argparse.Namespace) -> int:
    workspace = project_path(args)
    if not workspace.is_dir():
        return _fail(args, f"{workspace} is not a directory")
    try:
        settings = load_settings(workspace.resolve(), overrides(
            args, base_url=args.base_url, model=args.model, test_command=args.test_cmd,
            max_iterations=args.max_iterations, samples=args.samples))
    except SettingsError as exc:
        return _fail(args, str(exc))
    return execute(args, settings, RunRequest(kind="fix", workspace=workspace.resolve(), goal=args.goal,
                                                  hint=args.hint))


def execute(args: argparse.Namespace, settings: Settings, request: RunRequest, resume: bool = False) -> int:
    """Run the engine with terminal progress, apply a verified change on --apply, report, return the exit code."""
    unusable = precheck(args, request.workspace)
    if unusable:
        return _fail(args, unusable)
    hooks = TerminalHooks(sys.stderr, allow_unsafe=args.allow_unsafe, allow_non_code=args.allow_non_code,
                          plain=args.json)
    try:
        result = interrupt.run_engine(settings, request, hooks, resume=resume)
    finally:
        hooks.close()
    if result.kind == "task" and result.status == "ok":  # a task whose change passed: fix's vocabulary
        result.status = "fixed"
    apply_result(args, request.workspace, request.goal, result)
    journal = request.workspace / ".agentls" / "runs" / result.run_id if result.run_id else None
    return _report(args, journal if journal and journal.is_dir() else None, result)  # none written: null


def exit_code(result: RunResult) -> int:
    if result.error_kind == interrupt.INTERRUPTED:
        return interrupt.exit_status()
    if result.error_kind in _TWO:
        return EXIT_BAD_INPUT
    return EXIT_OK if result.status in ("fixed", "passed", "ok") else EXIT_FAILED


def json_summary(result: RunResult, journal: Path | None = None) -> dict:
    """The `--json` object (docs/cli.md): status, run_id, tests, usage (with cost_usd when prices are set), the
    verified diff, the journal's path, the settings warnings."""
    report = result.report
    failures = [{"nodeid": f.nodeid, "file": f.file, "line": f.line, "message": f.message}
                for f in (report.failures if report else [])]
    return {
        **empty_summary(),
        "status": result.status if result.status in STATUSES else "unfixed",
        "run_id": result.run_id, "iterations": result.iterations, "files_changed": result.change_set.files,
        "tests": {"passed": report.passed if report else 0, "failed": report.failed if report else 0,
                  "errors": report.errors if report else 0, "skipped": report.skipped if report else 0},
        "failures": failures,
        "usage": usage_summary(result),
        "duration_s": result.duration_s, "error": result.error, "explanation": result.explanation,
        "applied": result.applied, "commit": result.commit,
        "dropped": [dropped.model_dump(mode="json") for dropped in result.dropped],
        "diff": result.change_set.unified_diff() if result.change_set.changes else "",
        "journal": str(journal) if journal else None,
        "settings_warnings": list(result.settings_warnings),
        "refused": list(result.extra.get("refused") or []),  # candidates refused: they swallow the tests' errors
        "caveat": result.extra.get("caveat"),  # a fix that only adds an early return
    }


def usage_summary(result: RunResult) -> dict:
    """Tokens and calls of a run, and its cost in USD when every model it called has a price (else null)."""
    u = result.usage
    return {"prompt_tokens": u.prompt_tokens, "completion_tokens": u.completion_tokens, "total_tokens": u.tokens,
            "llm_calls": u.llm_calls, "cost_usd": result.cost_usd}


def empty_summary(error: str | None = None) -> dict:
    """The `--json` object of a command that could not run."""
    return {"status": "error", "run_id": "", "iterations": 0, "files_changed": [],
            "tests": {"passed": 0, "failed": 0, "errors": 0, "skipped": 0}, "failures": [],
            "usage": {"prompt_tokens": 0, "completion_tokens": 0, "total_tokens": 0, "llm_calls": 0,
                      "cost_usd": None},
            "duration_s": 0.0, "error": error, "explanation": "", "applied": False, "commit": None, "dropped": [],
            "diff": "", "journal": None, "settings_warnings": [], "refused": [], "caveat": None}


def _report(args: argparse.Namespace, journal: Path | None, result: RunResult) -> int:
    code = exit_code(result)
    if result.change_set.changes and not args.json:
        if result.explanation:  # above the diff; patch tools skip text before the first header
            sys.stdout.write(f"{result.explanation}\n\n")
        write_diff(result.change_set.unified_diff(), sys.stdout, wants_color(sys.stdout))
    color = wants_color(sys.stderr, args.json)
    if result.error:
        write_line(sys.stderr, f"agentls: {result.status}: {result.error}", "error", color)
    else:
        applied = " (applied)" if result.applied else (
            " (not applied: rerun with --apply)" if result.change_set.changes else "")
        write_line(sys.stderr, f"agentls: {result.summary}{applied}", "ok" if code == EXIT_OK else "warning", color)
    if result.commit:
        print(f"agentls: committed as {result.commit[:12]} (git revert undoes it)", file=sys.stderr)
    for dropped in result.dropped:
        print(f"agentls: left out of the fix: {dropped.path} ({dropped.reason})", file=sys.stderr)
    spent = usage_text(result.usage, result.cost_usd)
    write_line(sys.stderr, f"agentls: {spent} in {result.duration_s:.1f} s", "dim", color)
    if journal is not None:
        write_line(sys.stderr, f"agentls: journal: {journal}", "dim", color)
    if args.json:
        print(jsonout.dumps(json_summary(result, journal)))
    return code


def _fail(args: argparse.Namespace, message: str) -> int:
    write_line(sys.stderr, f"agentls: {message}", "error", wants_color(sys.stderr, args.json))
    if args.json:
        print(jsonout.dumps(empty_summary(message)))
    return EXIT_BAD_INPUT
