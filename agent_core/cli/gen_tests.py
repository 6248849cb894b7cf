"""`agentls gen-tests FILE [--target NAME] [--apply] [--json] [--set KEY=VALUE]`: generate tests that earn their place.

The workspace is the nearest ancestor of FILE holding pyproject.toml,
setup.py or .git (else FILE's directory). Without --apply the diff of the
test file goes to stdout; with --apply the test file is written (only test files:
workspace/codefiles.py's code-only rule, the one of every front door). With --json
the last stdout line is one JSON object (see docs/gen-tests.md). Exit codes:
0 ok, 1 error during the run, 2 bad input, bad configuration or an
unreachable endpoint.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from agent_core.cli import EXIT_BAD_INPUT, EXIT_FAILED, EXIT_OK, interrupt, jsonout
from agent_core.cli.fix import empty_summary, usage_summary
from agent_core.cli.options import add_set, overrides
from agent_core.cli.progress import TerminalHooks
from agent_core.cli.style import wants_color, write_diff, write_line
from agent_core.llm.usage import usage_text
from agent_core.models import GenTestsSummary, RunRequest, RunResult
from agent_core.settings import SettingsError, load_settings
from agent_core.workspace.changeset import ChangeSetConflict, apply_change_set
from agent_core.workspace.codefiles import code_only_refusal
from agent_core.workspace.testfiles import is_test_file

_EXIT_TWO = {"unavailable", "config", "bad_input"}
_MARKERS = ("pyproject.toml", "setup.py", ".git")


def register(subparsers: argparse._SubParsersAction) -> None:
    p = subparsers.add_parser("gen-tests", help="generate tests for a file, function or class")
    p.add_argument("file", metavar="FILE", help="the Python file to test")
    p.add_argument("--target", help="function or class (Class.method) to test (default: the whole file)")
    p.add_argument("--base-url", dest="base_url", help="OpenAI-compatible endpoint, e.g. http://127.0.0.1:8080/v1")
    p.add_argument("--model", help="model name sent to the endpoint")
    p.add_argument("--max-iterations", dest="max_iterations", type=int, help="repairs per generated test")
    p.add_argument("--apply", action="store_true", help="write the test file")
    p.add_argument("--json", action="store_true", help="print one JSON object as the last stdout line")
    add_set(p)
    p.set_defaults(func=run)


def find_workspace(file: Path) -> Path:
    """Nearest ancestor with pyproject.toml / setup.py / .git, else the file's directory."""
    for folder in file.parents:
        if any((folder / marker).exists() for marker in _MARKERS):
            return folder
    return file.parent


def run(args: argparse.Namespace) -> int:
    file = Path(args.file).expanduser().resolve()
    if not file.is_file() or file.suffix != ".py":
        return _fail(args, f"{args.file} is not a Python file")
    workspace = find_workspace(file)
    try:
        settings = load_settings(workspace, overrides(args, base_url=args.base_url, model=args.model,
                                                      max_iterations=args.max_iterations))
    except SettingsError as exc:
        return _fail(args, str(exc))
    hooks = TerminalHooks(sys.stderr, plain=args.json)
    request = RunRequest(kind="gen_tests", workspace=workspace, target_file=file.relative_to(workspace).as_posix(),
                         target_symbol=args.target)
    try:
        result = interrupt.run_engine(settings, request, hooks)
    finally:
        hooks.close()
    if args.apply and result.status == "ok" and result.change_set.changes:
        tests = {path for path in result.change_set.files if is_test_file(path)}  # what gen-tests was asked for
        refused = code_only_refusal(workspace, result.change_set.changes, tests, "gen-tests writes test files")
        try:
            if refused is None:
                apply_change_set(workspace, result.change_set)
        except ChangeSetConflict as exc:
            refused = str(exc)
        if refused:
            result.status, result.error = "error", f"not applied: {refused}"
            result.error_kind = "bad_input"
    return _report(args, result)


def exit_code(result: RunResult) -> int:
    if result.error_kind == interrupt.INTERRUPTED:
        return interrupt.exit_status()
    if result.error_kind in _EXIT_TWO:
        return EXIT_BAD_INPUT
    return EXIT_OK if result.status == "ok" else EXIT_FAILED


def json_summary(result: RunResult) -> dict:
    """The issue's JSON object."""
    found = result.gen_tests or GenTestsSummary()
    return {
        "status": "ok" if result.status == "ok" else "error",
        "tests_written": found.tests_written,
        "tests_kept": found.tests_kept,
        "tests_dropped": found.tests_dropped,
        "suspected_bugs": [bug.model_dump(mode="json") for bug in found.suspected_bugs],
        "coverage": found.coverage.model_dump(mode="json"),
        "mutation": found.mutation.model_dump(mode="json") if found.mutation else None,
        "files_changed": result.change_set.files,
        "usage": usage_summary(result),
        "duration_s": result.duration_s,
        "error": result.error,
        "run_id": result.run_id,
        "diff": result.change_set.unified_diff() if result.change_set.changes else "",
        "settings_warnings": list(result.settings_warnings),
    }


def _report(args: argparse.Namespace, result: RunResult) -> int:
    code = exit_code(result)
    if not args.json and result.change_set.changes:
        write_diff(result.change_set.unified_diff(), sys.stdout, wants_color(sys.stdout))
    found = result.gen_tests or GenTestsSummary()
    for bug in found.suspected_bugs:
        print(f"{bug.file}:{bug.line}: {bug.message} ({bug.test})", file=sys.stderr)
    for survivor in found.mutation.survivors if found.mutation else []:
        print(f"{survivor.file}:{survivor.line}: no test notices {survivor.change} here", file=sys.stderr)
    if result.error:
        print(f"agentls: {result.status}: {result.error}", file=sys.stderr)
    else:
        applied = " (applied)" if args.apply else (" (not applied: rerun with --apply)"
                                                   if result.change_set.changes else "")
        print(f"agentls: {result.summary}{applied}", file=sys.stderr)
    spent = usage_text(result.usage, result.cost_usd)
    write_line(sys.stderr, f"agentls: {spent} in {result.duration_s:.1f} s", "dim", wants_color(sys.stderr, args.json))
    if args.json:
        print(jsonout.dumps(json_summary(result)))
    return code


def _fail(args: argparse.Namespace, message: str) -> int:
    print(f"agentls: {message}", file=sys.stderr)
    if args.json:
        print(jsonout.dumps({"status": "error", "tests_written": 0, "tests_kept": 0, "tests_dropped": 0,
                          "suspected_bugs": [], "coverage": {"before": 0.0, "after": 0.0}, "mutation": None,
                          "files_changed": [],
                          "usage": empty_summary()["usage"], "duration_s": 0.0, "error": message, "run_id": "",
                          "diff": "", "settings_warnings": []}))
    return EXIT_BAD_INPUT
