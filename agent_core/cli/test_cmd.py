"""`agentls test [PATH]`: run a project's tests in the sandbox and print the report.

The tests run on a private temp copy of PATH (default `.`; PATH itself is
never written); `--set KEY=VALUE` overrides any setting. Exit codes: 0 tests
passed, 1 tests failed (or timed out, or hit a limit), 2 bad input (missing
PATH, bad settings, a sandbox that cannot run, or a run that is no test
outcome: no tests collected, a test command that cannot start; the same rule
as `agentls fix`, testing/baseline_check.py, with its hint). With `--json` the
human-readable report goes to stderr and stdout's last line is the JSON
summary shared with `agentls fix`.
"""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from typing import Any

from agent_core.cli import interrupt, jsonout
from agent_core.cli.fix import empty_summary
from agent_core.cli.options import add_path, add_set, overrides, project_path
from agent_core.cli.progress import TerminalHooks
from agent_core.cli.style import wants_color, write_line
from agent_core.events import PhaseEvent
from agent_core.models import TestReport, new_run_id
from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import SettingsError, load_settings
from agent_core.testing.baseline_check import broken_baseline
from agent_core.testing.runner import per_test_bound, run_tests
from agent_core.workspace.shadow import ShadowWorkspace

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("test", help="Run the tests of PATH in the sandbox and print the report.")
    add_path(parser, "the project directory (not modified)")
    parser.add_argument("--test-cmd", dest="test_cmd", default=None, help="test command (default: settings, pytest)")
    parser.add_argument("--json", action="store_true", help="print a JSON summary as the last line of stdout")
    add_set(parser)
    parser.set_defaults(func=run)


def describe(report: TestReport) -> str:
    """A readable multi-line report."""
    lines = [
        f"{report.passed} passed, {report.failed} failed, {report.errors} errors, {report.skipped} skipped"
        f" in {report.duration_s:.2f}s (sandbox: {report.backend or 'unknown'})"
    ]
    if report.timed_out:
        lines.append("TIMED OUT: the run was killed at the wall-clock limit")
    if report.limit_hit:
        lines.append(f"LIMIT HIT: {report.limit_hit}")
    for failure in report.failures:
        label = "ERROR " if failure.kind == "error" else "FAILED"
        lines.append(f"{label} {failure.nodeid} ({failure.file}:{failure.line})")
        lines.append(f"    {failure.message.splitlines()[0] if failure.message else ''}")
        if failure.source_file:
            lines.append(f"    in {failure.source_file}:{failure.source_line}")
    if not report.ok and not report.failures and report.output:
        lines += ["--- output (tail) ---", report.output]
    return "\n".join(lines)


def summary(
    report: TestReport | None, run_id: str, duration_s: float, error: str | None, warnings: list[str] | None = None
) -> dict[str, Any]:
    """The `--json` object (the shape of `agentls fix --json`)."""
    status = "error" if report is None or error is not None else "passed" if report.ok else "failed"
    if report is not None and error is None:
        if report.timed_out:
            error = "the test run timed out"
        elif report.limit_hit:
            error = f"the test run hit the sandbox's {report.limit_hit} limit"
    return {
        **empty_summary(error),
        "status": status,
        "run_id": run_id,
        "tests": {
            "passed": report.passed if report else 0,
            "failed": report.failed if report else 0,
            "errors": report.errors if report else 0,
            "skipped": report.skipped if report else 0,
        },
        "failures": [
            {"nodeid": f.nodeid, "file": f.file, "line": f.line, "message": f.message}
            for f in (report.failures if report else [])
        ],
        "duration_s": round(duration_s, 3),
        "settings_warnings": list(warnings or []),
    }


def _finish(args: argparse.Namespace, report: TestReport | None, run_id: str, started: float,
            error: str | None, warnings: list[str] | None = None) -> int:
    stream = sys.stderr if args.json or report is None else sys.stdout
    color = wants_color(stream, args.json)
    if report is not None:
        first, *rest = describe(report).splitlines()
        write_line(stream, first, "ok" if report.ok else "warning", color)
        for line in rest:
            write_line(stream, line, "error" if line.startswith(("FAILED", "ERROR", "TIMED", "LIMIT")) else "", color)
    if error is not None:  # no report, or one that is no test outcome (nothing collected, ...): with the hint
        write_line(sys.stderr, f"agentls test: {error}", "error", wants_color(sys.stderr, args.json))
    if args.json:
        print(jsonout.dumps(summary(report, run_id, time.monotonic() - started, error, warnings)))
    if report is None or error is not None:
        return EXIT_BAD_INPUT
    return EXIT_OK if report.ok else EXIT_FAILED


def run(args: argparse.Namespace) -> int:
    started = time.monotonic()
    run_id = new_run_id()
    path = project_path(args)
    if not path.is_dir():
        return _finish(args, None, run_id, started, f"{path} is not a directory")
    try:
        settings = load_settings(path.resolve(), overrides(args, test_command=args.test_cmd))
        sandbox = make_sandbox(settings, announce=lambda msg: print(msg, file=sys.stderr))
    except (SettingsError, SandboxError) as exc:
        return _finish(args, None, run_id, started, str(exc))
    bar = TerminalHooks(sys.stderr, plain=args.json)
    if bar.tty:  # a live bar with the time elapsed while the suite runs; piped output stays as it was
        bar.emit(PhaseEvent(run_id=run_id, phase="testing", message="running the tests in the sandbox", percentage=10))
    try:
        with ShadowWorkspace(path) as shadow:
            report = asyncio.run(
                run_tests(
                    sandbox,
                    shadow.root,
                    settings.test_command,
                    timeout_s=settings.sandbox.timeout_s,
                    test_timeout_s=per_test_bound(None, settings.sandbox.test_timeout_s, settings.sandbox.timeout_s),
                    paced=not settings.sandbox.test_timeout_s,  # a derived bound follows the passing tests
                )
            )
    except SandboxError as exc:
        return _finish(args, None, run_id, started, f"the sandbox failed: {exc}")
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM (cli/interrupt.py): the copy and the sandbox are gone
        bar.close()
        _finish(args, None, run_id, started, interrupt.describe())
        return interrupt.exit_status()
    finally:
        bar.close()
    for notice in settings.notices:
        write_line(sys.stderr, f"agentls: warning: {notice}", "warning", wants_color(sys.stderr, args.json))
    return _finish(args, report, run_id, started, broken_baseline(report, path, settings.test_command),
                   settings.notices)
