"""The command line both bug corpora share (bench/real_corpus.py, bench/history_corpus.py).

Each corpus has `fetch`, `list [--markdown]`, `patch PROJECT/BUG` and
`validate [--only ...] [--update]`, with its own handlers and help texts; a
corpus adds commands of its own to the returned subparsers. `run` parses,
makes `kill` unwind like Ctrl-C (the running suite is killed and the temp
copies are removed), and turns a corpus error into exit status 2.
"""

from __future__ import annotations

import argparse
import signal
import sys
from collections.abc import Callable
from dataclasses import dataclass

from bench.support.real_projects import CorpusError

Command = Callable[[argparse.Namespace], int]


@dataclass(frozen=True)
class CorpusCommands:
    """The handlers of the four shared commands and the help texts that differ between the corpora."""

    fetch: Command
    listing: Command
    patch: Command
    validate: Command
    fetch_help: str
    list_help: str
    markdown_help: str
    patch_help: str
    only_help: str
    update_help: str


def corpus_parser(
    description: str, commands: CorpusCommands
) -> tuple[argparse.ArgumentParser, argparse._SubParsersAction]:
    """The parser with the four shared commands, and its subparsers for a corpus's own."""
    parser = argparse.ArgumentParser(description=description)
    sub = parser.add_subparsers(dest="command", required=True)
    sub.add_parser("fetch", help=commands.fetch_help).set_defaults(func=commands.fetch)
    listing = sub.add_parser("list", help=commands.list_help)
    listing.add_argument("--markdown", action="store_true", help=commands.markdown_help)
    listing.set_defaults(func=commands.listing)
    patch = sub.add_parser("patch", help=commands.patch_help)
    patch.add_argument("task", help="PROJECT/BUG")
    patch.set_defaults(func=commands.patch)
    val = sub.add_parser("validate", help="check every bug against its project's suite")
    val.add_argument("--only", nargs="*", help=commands.only_help)
    val.add_argument("--update", action="store_true", help=commands.update_help)
    val.set_defaults(func=commands.validate)
    return parser, sub


def run(parser: argparse.ArgumentParser, argv: list[str] | None) -> int:
    """Parse `argv` and run the chosen command."""
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))
    try:
        return args.func(args)
    except CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
