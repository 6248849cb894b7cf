"""The real-project bug corpus (bench/real_corpus/*.toml): fetch, list, show as patches, validate.

    python -m bench.real_corpus fetch                 # pip download the pinned sdists into the cache
    python -m bench.real_corpus list [--markdown]     # projects, module sizes, bugs
    python -m bench.real_corpus patch PROJECT/BUG     # one bug as a unified diff against the pinned tree
    python -m bench.real_corpus validate [--only PROJECT[/BUG] ...] [--update]

`validate` checks every manifest's structure, then for each project makes a
fresh copy of the pinned tree with its `.venv` (see bench/support/real_projects.py) and
checks that the unmodified tree passes its own suite (minus the manifest's
`excluded` tests, each with its reason), that each injected bug makes at least
one test fail and exactly the recorded `failing` tests (with --update the
manifest's `failing` line is rewritten to what was observed), and that the
reverse patch makes the suite pass again. Exit status 1 when anything is wrong.
Needs the network only for the first fetch and the base venvs; the cache is
AGENTLS_BENCH_CACHE (default ~/.cache/agentls-bench).
"""

from __future__ import annotations

import argparse
import json
import re
import sys
import tempfile
from pathlib import Path

from bench.support import real_projects as rp
from bench.support.corpus_cli import CorpusCommands, corpus_parser, run


def _selected(projects: list[rp.Project], only: list[str] | None) -> list[tuple[rp.Project, list[rp.Bug]]]:
    chosen = []
    for project in projects:
        wanted = [b for b in project.bugs if not only or project.name in only or b.task in only]
        if wanted or (only and project.name in only):
            chosen.append((project, wanted))
    return chosen


def _update_failing(bug: rp.Bug, failing: list[str]) -> None:
    """Rewrite the `failing = [...]` line of `bug` in its manifest."""
    path = rp.MANIFESTS / f"{bug.project}.toml"
    text = path.read_text(encoding="utf-8")
    start = text.index(f'id = "{bug.id}"\n')
    end = text.find("[[bug]]", start)
    end = len(text) if end < 0 else end
    block = re.sub(r"(?m)^failing = .*$", "failing = " + json.dumps(failing), text[start:end], count=1)
    if "failing = " not in block:
        block = block.rstrip("\n") + "\nfailing = " + json.dumps(failing) + "\n\n"
    path.write_text(text[:start] + block + text[end:], encoding="utf-8")


def _what_is_wrong(broken: rp.SuiteRun, again: rp.SuiteRun) -> str | None:
    if not broken.failing:
        return "NO TEST FAILS"
    if broken.returncode is None:
        return "THE SUITE HANGS (timed out)"
    if not again.green:
        return f"REVERSE PATCH DOES NOT PASS: {again.failing[:3]}"
    return None


def _difference(bug: rp.Bug, observed: list[str], update: bool) -> str:
    """A note when the failing tests differ from the manifest's (a randomised test may come and go); with
    --update the manifest takes the observed list. Only a bug that breaks none of the recorded tests is wrong."""
    if update:
        _update_failing(bug, observed)
        return "failing tests updated in the manifest"
    extra, missing = sorted(set(observed) - set(bug.failing)), sorted(set(bug.failing) - set(observed))
    note = f"ok (also failing: {extra[:3]}; not failing: {missing[:3]})"
    return f"breaks none of the recorded tests: {observed[:3]}" if not set(observed) & set(bug.failing) else note


def validate_project(project: rp.Project, bugs: list[rp.Bug], update: bool) -> list[str]:
    problems: list[str] = []
    with tempfile.TemporaryDirectory(prefix=f"agentls-real-{project.name}-") as tmp:
        tree = rp.prepare_copy(project, Path(tmp) / project.name)
        clean = rp.run_suite(project, tree)
        print(f"{project.slug}: unmodified: {clean.passed} passed, {len(clean.failing)} failing, "
              f"{clean.seconds:.1f} s", flush=True)
        if not clean.green:
            problems.append(f"{project.slug}: the unmodified tree does not pass: {clean.failing[:5]} "
                            f"{clean.tail[-300:] if not clean.failing else ''}")
            return problems
        for bug in bugs:
            rp.inject(bug, tree)
            broken = rp.run_suite(project, tree)
            rp.revert(bug, tree)
            again = rp.run_suite(project, tree)
            wrong = _what_is_wrong(broken, again)
            status = wrong or ("ok" if broken.failing == sorted(bug.failing) else
                               _difference(bug, broken.failing, update))
            wrong = wrong or (status if status.startswith("breaks none") else None)
            print(f"  {bug.id:<40} {bug.kind:<18} {len(broken.failing):>4} failing  "
                  f"{broken.seconds:5.1f} s  revert {again.passed} passed  {status}", flush=True)
            if wrong:
                problems.append(f"{bug.task}: {wrong}; observed failing: {broken.failing[:8]}")
    return problems


def cmd_validate(args: argparse.Namespace) -> int:
    projects = rp.load_projects()
    problems = [p for project in projects for p in rp.manifest_problems(project)
                if not (args.update and p.endswith("no failing tests recorded"))]
    for project, bugs in _selected(projects, args.only):
        problems += validate_project(project, bugs, args.update)
    total = sum(len(bugs) for _, bugs in _selected(projects, args.only))
    print(f"\n{total} bugs checked, {len(problems)} problems")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


def module_lines(project: rp.Project, tree: Path) -> list[tuple[str, int]]:
    return [(m, len((tree / m).read_text(encoding="utf-8").splitlines())) for m in project.modules]


def cmd_list(args: argparse.Namespace) -> int:
    projects = rp.load_projects()
    if args.markdown:
        print("| project | bug | kind | where | tests it breaks |\n| --- | --- | --- | --- | --- |")
    for project in projects:
        if args.markdown:
            for bug in project.bugs:
                print(f"| {project.name} | `{bug.id}` | {bug.kind} | `{bug.file}:{bug.line}` | {len(bug.failing)} |")
            continue
        tree = rp.pristine_tree(project, rp.cache_dir())
        sizes = ", ".join(f"{m} {n:,}" for m, n in module_lines(project, tree))
        print(f"{project.slug} ({project.import_root}): {sizes}; {len(project.bugs)} bugs")
        for bug in project.bugs:
            print(f"  {bug.id:<40} {bug.kind:<18} {bug.file}:{bug.line}  {len(bug.failing)} failing")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    for project in rp.load_projects():
        print(rp.pristine_tree(project, rp.cache_dir()))
    return 0


def cmd_patch(args: argparse.Namespace) -> int:
    bugs = {b.task: b for p in rp.load_projects() for b in p.bugs}
    if args.task not in bugs:
        print(f"no bug {args.task!r}; known: {', '.join(sorted(bugs))}", file=sys.stderr)
        return 2
    bug = bugs[args.task]
    project = next(p for p in rp.load_projects() if p.name == bug.project)
    print(rp.as_patch(bug, rp.pristine_tree(project, rp.cache_dir())), end="")
    return 0


def main(argv: list[str] | None = None) -> int:
    parser, _ = corpus_parser(__doc__.splitlines()[0], CorpusCommands(
        fetch=cmd_fetch, listing=cmd_list, patch=cmd_patch, validate=cmd_validate,
        fetch_help="download and unpack the pinned sdists", list_help="projects, module sizes and bugs",
        markdown_help="the bug table of docs/benchmarks.md", patch_help="one bug as a unified diff",
        only_help="PROJECT or PROJECT/BUG names", update_help="rewrite each bug's `failing` to what was observed"))
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
