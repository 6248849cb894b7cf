"""Fix rate of `agentls fix` on real open-source projects with one injected bug each (bench/real_corpus/).

    .venv/bin/python -m bench.real_corpus fetch      # once: the pinned sdists into ~/.cache/agentls-bench
    .venv/bin/python -m bench.real_fix_rate [--projects NAME ...] [--tasks PROJECT/BUG ...]
        [--memory fresh|carried] [--memory-file PATH] [--max-iterations N] [--timeout S] [--out rows.json]

Each task is a fresh copy of a project's pinned, unmodified source tree
(python-dateutil, more-itertools, boltons, toolz: see bench/support/real_projects.py and
docs/benchmarks.md) with one single-line bug from its manifest injected. The
copy is set up the way a user's checkout of that project is:

    project/                    the sdist's tree: package (or src/package), its own tests, pyproject/setup.cfg
    project/.venv/              python -m venv .venv
                                .venv/bin/pip install -e . <the manifest's pinned test_deps>
                                (the editable install puts the tree's import root, `.` or `src`, on the
                                venv's import path, so the suite imports the code under test from the tree)
    project/.agentls.toml       test_command = "pytest <the project's test dir> [--deselect ...]"
    (environment)               AGENTLS_MEMORY__PATH = "<the memory file of this mode>"

(`.venv` is built from a per-project venv in the cache, see bench/support/real_projects.py,
so a task is set up in about a second without the network.) agentls is then
run as a user would: `agentls fix COPY --json --apply`, with the bug's
location never named. Afterwards the project's own suite is run here with the
copy's `.venv`; the task counts as fixed only when agentls said fixed and that
suite passes. The memory modes, the per-task outcome (search alone, first
model round, later rounds, not fixed), tokens, wall times, the table and the
JSON rows are those of bench/fix_rate.py, which this script shares.
agentls itself runs in fix_rate.py's environment (the sandbox gives the
tests a clean one of its own).

agentls must run the copy's tests with the copy's `.venv` (python-dateutil has
a src/ layout and needs it: without that venv its suite cannot import
`dateutil` at all), and with the project's own pytest plugins loading as they
would for the user (python-dateutil's suite needs pytest-cov's `no_cover`
marker: with PYTEST_DISABLE_PLUGIN_AUTOLOAD=1 it stops at collection).
"""

from __future__ import annotations

import argparse
import shlex
import sys
from functools import partial
from pathlib import Path

from bench import fix_rate
from bench.support import real_projects as rp


def test_command(project: rp.Project) -> str:
    """What the user's `.agentls.toml` says: the project's suite, with the excluded tests deselected."""
    return shlex.join(["pytest", *project.pytest_args()])


def _prepare(project: rp.Project, bug: rp.Bug, python: str | None, dest: Path) -> Path:
    rp.prepare_copy(project, dest, python=python)
    rp.inject(bug, dest)
    return dest


def _suite_passes(project: rp.Project, workspace: Path) -> bool:
    return rp.run_suite(project, workspace).green


def real_tasks(projects: list[rp.Project], python: str | None = None) -> list[fix_rate.Task]:
    """One Task per bug, in manifest order, project by project."""
    return [
        fix_rate.Task(name=bug.task, kind=bug.kind, prepare=partial(_prepare, project, bug, python),
                      check=partial(_suite_passes, project), settings={"test_command": test_command(project)})
        for project in projects for bug in project.bugs
    ]


def select(projects: list[rp.Project], names: list[str] | None, tasks: list[str] | None) -> list[rp.Project]:
    """The projects named (all when none), each keeping only the bugs named in `tasks` (all when none)."""
    chosen = [p for p in projects if not names or p.name in names]
    if tasks:
        chosen = [rp.Project(**{**p.__dict__, "bugs": tuple(b for b in p.bugs if b.task in tasks)}) for p in chosen]
    return [p for p in chosen if p.bugs]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--projects", nargs="*", help="only these projects")
    parser.add_argument("--tasks", nargs="*", help="only these PROJECT/BUG tasks")
    parser.add_argument("--python", help="interpreter for the projects' venvs (default: this Python's base)")
    parser.add_argument("--manifests", type=Path, default=rp.MANIFESTS, help="the corpus's manifest directory")
    fix_rate.add_common_arguments(parser)
    args = parser.parse_args(argv)
    try:
        projects = select(rp.load_projects(args.manifests), args.projects, args.tasks)
        if not projects:
            print("no task selected", file=sys.stderr)
            return 2
        for project in projects:  # fetch and build the base venvs before the clock of any task starts
            rp.base_venv(project, rp.cache_dir(), args.python or sys._base_executable)
            rp.pristine_tree(project, rp.cache_dir())
        return fix_rate.run_corpus(real_tasks(projects, args.python), args)
    except rp.CorpusError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2


if __name__ == "__main__":
    sys.exit(main())
