"""The `agentls` command line: one composition root for every subcommand.

Each subcommand lives in its own module exposing `register(subparsers)`,
which adds its parser and sets `func` to a callable taking the parsed
arguments and returning the process exit code. Exit codes are a contract:
0 success (fixed / tests passed), 1 unfixed / tests failed, 2 bad input,
bad configuration or an unreachable endpoint.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys

from agent_core import __version__

# Subcommand modules, in the order they appear in --help. A module that is
# missing (a feature not installed) is skipped rather than breaking the CLI.
SUBCOMMANDS = (
    "agent_core.cli.fix",
    "agent_core.cli.run_task",
    "agent_core.cli.test_cmd",
    "agent_core.cli.gen_tests",
    "agent_core.cli.serve",
    "agent_core.cli.mcp",
    "agent_core.cli.sandbox",
    "agent_core.cli.model",
    "agent_core.cli.journal",
    "agent_core.cli.report",
    "agent_core.cli.prompts",
    "agent_core.cli.resume",
    "agent_core.cli.config",
)

EXIT_OK, EXIT_FAILED, EXIT_BAD_INPUT = 0, 1, 2


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="agentls", description="Plan, code, test in a sandbox, reflect.")
    parser.add_argument("-V", "--version", action="version", version=f"agentls {__version__}")
    subparsers = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")
    for name in SUBCOMMANDS:
        try:
            module = importlib.import_module(name)
        except ModuleNotFoundError as exc:
            if exc.name != name:
                raise
            continue
        module.register(subparsers)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    if argv in (["--version"], ["-V"]):  # answered before any subcommand (and the engine) is imported
        print(f"agentls {__version__}")
        return EXIT_OK
    from agent_core.cli import interrupt  # imports the engine: only once a command will run

    parser = build_parser()
    args = parser.parse_args(argv)
    interrupt.sweep_dead_owners()  # what a killed agentls left in the temp dir
    try:
        with interrupt.terminate_as_interrupt():
            code = int(args.func(args))
        sys.stdout.flush()  # inside the try: a reader that left shows here, not at the interpreter's exit
        return code
    except KeyboardInterrupt:
        print(f"agentls: {interrupt.describe()}", file=sys.stderr)
        return interrupt.exit_status()
    except BrokenPipeError:
        # The reader went away (`agentls trace | head`): stop quietly, as `cat` does, instead of a traceback;
        # stdout is pointed at /dev/null so the interpreter's final flush cannot raise again.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return EXIT_FAILED


if __name__ == "__main__":
    sys.exit(main())
