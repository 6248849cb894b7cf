"""The real-history corpus (bench/history_corpus/<project>/<bug>.toml): fixes real projects made, reverted.

    python -m bench.history_corpus fetch                 # the sdists and each project's venv into the cache
    python -m bench.history_corpus list [--markdown]     # the bugs: project, versions, kind, lines, tests
    python -m bench.history_corpus patch PROJECT/BUG     # the author's fix as a unified diff
    python -m bench.history_corpus buggy PROJECT/BUG DIR # the buggy tree with its .venv at DIR
    python -m bench.history_corpus validate [--only PROJECT[/BUG] ...] [--update]

Each bug is a fix that a project released: `previous` and `version` are two
consecutive sdists on PyPI, the fix was read off their diff and the release
notes (`changelog`), and `fix` is the source part of it as a unified diff
against the `version` sdist. The buggy tree is the `version` sdist with `fix`
reversed (its tests stay those of `version`, so the test added or changed with
the fix checks it); applying `fix` again gives the author's tree. Nothing of a
project is kept in this repository: the sdists are fetched with
`pip download --no-deps --no-binary :all:` into AGENTLS_BENCH_CACHE/history
(default ~/.cache/agentls-bench/history) and every bug works on a copy.

Each project version has its own environment, as a user's checkout would:
a `.venv` of the manifest's `python` (pyenv's interpreters, ~/.pyenv/versions)
with the pinned `test_deps` and the tree on its path (bench/support/real_projects.py builds
it). `validate` checks, per project version, that the author's tree passes
its suite (the manifest's `test_args`, minus `excluded`), then per bug that
with the fix reversed every test in `tests` fails (all that fail are recorded
in `failing`; --update writes them), and that the fix applies back to the
author's exact files. Exit status 1 when anything is wrong.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import tomllib
from dataclasses import dataclass
from pathlib import Path

from bench.support import real_projects as rp
from bench.support.corpus_cli import CorpusCommands, corpus_parser, run

MANIFESTS = rp.ROOT / "bench" / "history_corpus"
KINDS = frozenset({"one-line", "two-line", "guard", "try", "new-statement", "multi-line", "keyword-argument"})
_HUNK = re.compile(r"^@@ -\d+(?:,\d+)? \+\d+(?:,\d+)? @@")


@dataclass(frozen=True)
class HistoryBug:
    project: str
    version: str
    previous: str
    python: str
    id: str
    kind: str
    files: tuple[str, ...]
    summary: str
    changelog: str
    tests: tuple[str, ...]
    fix: str
    env: rp.Project
    failing: tuple[str, ...] = ()

    @property
    def task(self) -> str:
        return f"{self.project}/{self.id}"

    @property
    def slug(self) -> str:
        return self.env.slug

    @property
    def changed_lines(self) -> tuple[int, int]:
        """(lines removed, lines added) by the author's fix."""
        body = [line for line in self.fix.splitlines() if not line.startswith(("---", "+++"))]
        return sum(line.startswith("-") for line in body), sum(line.startswith("+") for line in body)


def cache() -> Path:
    return rp.cache_dir() / "history"


def load_bug(path: Path) -> HistoryBug:
    """One manifest; CorpusError names the file for a TOML error or a missing key."""
    try:
        data = tomllib.loads(path.read_text(encoding="utf-8"))
        env = rp.Project(name=data["project"], version=data["version"], import_root=data.get("import_root", "."),
                         test_deps=tuple(data["test_deps"]), test_args=tuple(data.get("test_args", ())),
                         excluded=tuple(data.get("excluded", ())), modules=tuple(data["files"]))
        return HistoryBug(project=data["project"], version=data["version"], previous=data["previous"],
                          python=str(data["python"]), id=path.stem, kind=data["kind"], files=tuple(data["files"]),
                          summary=data["summary"], changelog=data["changelog"], tests=tuple(data["tests"]),
                          fix=data["fix"], env=env, failing=tuple(data.get("failing", ())))
    except (OSError, tomllib.TOMLDecodeError, KeyError, TypeError, ValueError) as exc:
        raise rp.CorpusError(f"{path}: {exc!r}") from exc


def load_bugs(directory: Path = MANIFESTS) -> list[HistoryBug]:
    return [load_bug(p) for p in sorted(directory.glob("*/*.toml"))]


def manifest_problems(bugs: list[HistoryBug]) -> list[str]:
    """What is wrong with the manifests' structure, one line each (empty when sound)."""
    problems: list[str] = []
    envs: dict[str, tuple] = {}
    for bug in bugs:
        where = bug.task
        key = (bug.python, bug.env.import_root, bug.env.test_deps, bug.env.test_args, bug.env.excluded)
        if envs.setdefault(bug.slug, key) != key:
            problems.append(f"{where}: python/test_deps/test_args differ from another bug of {bug.slug}")
        problems += [f"{where}: {p}" for p in rp.manifest_problems(bug.env)]
        if bug.kind not in KINDS:
            problems.append(f"{where}: unknown kind {bug.kind!r} (one of {sorted(KINDS)})")
        headers = [line[6:].strip() for line in bug.fix.splitlines() if line.startswith("+++ b/")]
        if sorted(headers) != sorted(bug.files):
            problems.append(f"{where}: the fix's files {headers} are not `files` {list(bug.files)}")
        if not any(_HUNK.match(line) for line in bug.fix.splitlines()):
            problems.append(f"{where}: the fix has no hunk")
        if not bug.tests or not bug.changelog.strip() or not bug.summary.strip():
            problems.append(f"{where}: tests, changelog and summary are required")
    return problems


def interpreter(version: str) -> str:
    """pyenv's newest X.Y interpreter (~/.pyenv/versions/X.Y.*/bin/pythonX.Y)."""
    found = sorted(Path("~/.pyenv/versions").expanduser().glob(f"{version}.*/bin/python{version}"),
                   key=lambda p: [int(n) for n in re.findall(r"\d+", p.parent.parent.name)])
    if not found:
        raise rp.CorpusError(f"no Python {version} under ~/.pyenv/versions")
    return str(found[-1])


def author_tree(bug: HistoryBug) -> Path:
    """The `version` sdist unpacked in the cache: the author's fixed tree, never modified."""
    return rp.pristine_tree(bug.env, cache())


def ensure_env(bug: HistoryBug) -> Path:
    """The project version's base venv (its Python, its pinned test deps), built once."""
    return rp.base_venv(bug.env, cache(), interpreter(bug.python))


def apply_fix(bug: HistoryBug, tree: Path, reverse: bool = False) -> None:
    """Apply the author's fix to `tree` (reverse=True takes it out); CorpusError when it does not apply."""
    # --forward: a fix already applied (or already reversed) is an error, never silently undone
    argv = ["patch", "-p1", "--forward", "--silent", "--no-backup-if-mismatch", "--reject-file=-", "-d", str(tree)]
    proc = subprocess.run([*argv, *(["-R"] if reverse else [])], input=bug.fix, capture_output=True, text=True,
                          timeout=60, check=False)
    if proc.returncode != 0:
        raise rp.CorpusError(f"{bug.task}: the fix does not apply{' in reverse' if reverse else ''}: "
                             f"{(proc.stdout + proc.stderr).strip()[-400:]}")


def buggy_copy(bug: HistoryBug, dest: Path) -> Path:
    """A fresh copy of the `version` tree at `dest` with its `.venv`, the fix reversed: the bug."""
    rp.prepare_copy(bug.env, dest, python=interpreter(bug.python), cache=cache())
    apply_fix(bug, dest, reverse=True)
    return dest


def _same_as_author(bug: HistoryBug, tree: Path) -> bool:
    pristine = author_tree(bug)
    return all((tree / f).read_bytes() == (pristine / f).read_bytes() for f in bug.files)


def _update_failing(bug: HistoryBug, failing: list[str]) -> None:
    """Rewrite (or add) the manifest's `failing = [...]` line."""
    path = MANIFESTS / bug.project / f"{bug.id}.toml"
    text = path.read_text(encoding="utf-8")
    line = "failing = " + json.dumps(failing)
    if re.search(r"(?m)^failing = .*$", text):
        text = re.sub(r"(?m)^failing = .*$", lambda _: line, text, count=1)
    else:
        text = text.replace("\nfix = ", f"\n{line}\nfix = ", 1)
    path.write_text(text, encoding="utf-8")


def validate_version(bugs: list[HistoryBug], update: bool) -> list[str]:
    """The author's tree passes; each bug's tests fail with its fix reversed; the fix applies back exactly."""
    first, problems = bugs[0], []
    ensure_env(first)
    with tempfile.TemporaryDirectory(prefix=f"agentls-history-{first.slug}-") as tmp:
        tree = rp.prepare_copy(first.env, Path(tmp) / first.project, python=interpreter(first.python), cache=cache())
        clean = rp.run_suite(first.env, tree)
        print(f"{first.slug} (Python {first.python}): author's tree: {clean.passed} passed, "
              f"{len(clean.failing)} failing, {clean.seconds:.1f} s", flush=True)
        if not clean.green:
            return [f"{first.slug}: the author's tree does not pass: {clean.failing[:5]} {clean.tail[-400:]}"]
        for bug in bugs:
            try:
                apply_fix(bug, tree, reverse=True)
                broken = rp.run_suite(bug.env, tree)
                apply_fix(bug, tree)
            except rp.CorpusError as exc:
                problems.append(str(exc))
                continue
            missing = [t for t in bug.tests if not failed(t, broken.failing)]
            status = "ok" if not missing and broken.failing else f"TESTS DO NOT FAIL: {missing[:3]}"
            if not _same_as_author(bug, tree):
                status = "THE FIX DOES NOT GIVE THE AUTHOR'S FILES BACK"
            if status == "ok" and update and tuple(broken.failing) != bug.failing:
                _update_failing(bug, broken.failing)
            removed, added = bug.changed_lines
            print(f"  {bug.id:<36} {bug.kind:<16} -{removed}/+{added}  {len(broken.failing):>3} failing  "
                  f"{broken.seconds:5.1f} s  {status}", flush=True)
            if status != "ok":
                problems.append(f"{bug.task}: {status}; observed failing: {broken.failing[:6]} "
                                f"{broken.tail[-300:] if not broken.failing else ''}")
    return problems


def failed(test: str, failing: list[str]) -> bool:
    """`test` is among `failing`, or, named without parameters, one of its parametrized cases is."""
    return test in failing or any(f.startswith(test + "[") for f in failing)


def by_version(bugs: list[HistoryBug]) -> dict[str, list[HistoryBug]]:
    grouped: dict[str, list[HistoryBug]] = {}
    for bug in bugs:
        grouped.setdefault(bug.slug, []).append(bug)
    return grouped


def select(bugs: list[HistoryBug], only: list[str] | None) -> list[HistoryBug]:
    return [b for b in bugs if not only or b.project in only or b.task in only or b.slug in only]


def cmd_validate(args: argparse.Namespace) -> int:
    bugs = load_bugs()
    problems = manifest_problems(bugs)
    chosen = select(bugs, args.only)
    for group in by_version(chosen).values():
        problems += validate_version(group, args.update)
    print(f"\n{len(chosen)} bugs checked, {len(problems)} problems")
    for problem in problems:
        print(f"  {problem}")
    return 1 if problems else 0


def cmd_list(args: argparse.Namespace) -> int:
    bugs = load_bugs()
    if args.markdown:
        print("| project | versions | Python | bug | kind | lines -/+ | tests |")
        print("| --- | --- | --- | --- | --- | --- | --- |")
    for bug in bugs:
        removed, added = bug.changed_lines
        if args.markdown:
            print(f"| {bug.project} | {bug.previous} -> {bug.version} | {bug.python} | `{bug.id}` | {bug.kind} | "
                  f"-{removed}/+{added} | {len(bug.tests)} |")
        else:
            print(f"{bug.task:<44} {bug.previous}->{bug.version:<8} py{bug.python:<5} {bug.kind:<16} "
                  f"-{removed}/+{added}  {', '.join(bug.files)}")
    return 0


def cmd_fetch(args: argparse.Namespace) -> int:
    for group in by_version(load_bugs()).values():
        print(author_tree(group[0]), ensure_env(group[0]), flush=True)
    return 0


def _find(task: str) -> HistoryBug:
    bugs = {b.task: b for b in load_bugs()}
    if task not in bugs:
        raise rp.CorpusError(f"no bug {task!r}; known: {', '.join(sorted(bugs))}")
    return bugs[task]


def cmd_patch(args: argparse.Namespace) -> int:
    print(_find(args.task).fix, end="")
    return 0


def cmd_buggy(args: argparse.Namespace) -> int:
    if args.dest.exists():
        shutil.rmtree(args.dest)
    print(buggy_copy(_find(args.task), args.dest))
    return 0


def main(argv: list[str] | None = None) -> int:
    parser, sub = corpus_parser(__doc__.splitlines()[0], CorpusCommands(
        fetch=cmd_fetch, listing=cmd_list, patch=cmd_patch, validate=cmd_validate,
        fetch_help="download the sdists and build the venvs", list_help="the bugs",
        markdown_help="the table of docs/benchmarks.md", patch_help="the author's fix as a unified diff",
        only_help="PROJECT, PROJECT-VERSION or PROJECT/BUG names",
        update_help="record each bug's failing tests in its manifest"))
    buggy = sub.add_parser("buggy", help="set up the buggy tree with its .venv")
    buggy.add_argument("task", help="PROJECT/BUG")
    buggy.add_argument("dest", type=Path)
    buggy.set_defaults(func=cmd_buggy)
    return run(parser, argv)


if __name__ == "__main__":
    sys.exit(main())
