"""What a run leaves out of a workspace: the one definition of the skip rule.

Two layers, both applied to the shadow copy, the change set, the file tools'
listing and the source walks (`hidden_or_skipped` adds hidden folders):

- `skip_dir`: folders never copied or walked whatever the project says
  (version control metadata, virtualenvs, caches, build output, `*.egg-info`).
- `IgnoreRules`: the project's own `.gitignore` files, the way git reads them:
  the root one (after `.git/info/exclude`), nested ones relative to their
  folder, the deeper file and the later line winning, `!` re-including, and
  nothing re-included below an ignored folder. Matching is `pathspec`'s
  gitignore dialect. As in git, a file the repository tracks stays in though
  a rule matches it: in a git work tree, `git ls-files --ignored` names those
  once (without git, or outside a work tree, the rules alone decide).

Two exceptions keep the code importable. An installed distribution's metadata
folder on the import path (`installed_metadata`: `pkg.egg-info` at the root
or in `src/`) is copied: `importlib.metadata` reads the project's version and
entry points there. And an ignored Python module (`.py`, or
an extension module built in place) that a kept `.py` file beside it imports
stays in (`imported_by_siblings`). A setuptools_scm or hatch-vcs project
ignores its generated `src/pkg/_version.py`, which `__init__.py` imports:
left out, the package cannot be imported in the sandbox and every test
errors before any search. Only folders that hold an ignored module are read,
and only their own kept `.py` files, once per folder.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path, PurePosixPath

from pathspec import GitIgnoreSpec

from agent_core.workspace.gitenv import USER_REPO_OPTIONS

SKIP_DIRS = frozenset(
    {
        ".git", ".hg", ".svn", ".venv", "venv", "env", "__pycache__", "node_modules", ".agentls",
        ".tox", ".nox", ".mypy_cache", ".pytest_cache", ".ruff_cache", ".hypothesis", "build", "dist",
        ".eggs",
    }
)
GITIGNORE = ".gitignore"
GIT_TIMEOUT_S = 20.0
IMPORTER_BYTES = 200_000  # the part of a kept module read for its imports
_IMPORT = re.compile(r"^[ \t]*(?:from[ \t]+([.\w]+)[ \t]+import[ \t]+(.+)|import[ \t]+(.+))", re.MULTILINE)


def skip_dir(name: str) -> bool:
    """A folder (or a file or link of that name, e.g. a worktree's `.git` file) left out of every copy and walk."""
    return name in SKIP_DIRS or name.endswith(".egg-info")


METADATA_SUFFIXES = (".egg-info", ".dist-info")
IMPORT_ROOTS = (".", "src")  # where an editable install's path entry points: the project root, or its src/


def installed_metadata(rel: str) -> bool:
    """An installed distribution's metadata folder on the project's import path (`Markdown.egg-info` at the
    root, `src/shop.egg-info`): what `pip install -e .` (setuptools' develop mode) leaves in the tree, and
    where `importlib.metadata` finds the project's version and entry points. Left out of the shadow copy
    (build output, and git-ignored as a rule), `version("shop")` raises PackageNotFoundError in the sandbox and
    plugins registered as entry points are missing (Python-Markdown's extensions: every extension test fails).
    The copy keeps it whatever `skip_dir` and the ignore files say; the change set never reports it."""
    path = PurePosixPath(rel)
    return path.name.endswith(METADATA_SUFFIXES) and path.parent.as_posix() in IMPORT_ROOTS


def hidden_or_skipped(name: str) -> bool:
    """A folder the source walks (analysis, context, test discovery) do not enter: hidden, or `skip_dir`."""
    return name.startswith(".") or skip_dir(name)


def _read_lines(path: Path) -> list[str]:
    try:
        return path.read_text(encoding="utf-8", errors="replace").splitlines()
    except OSError:  # unreadable or not a file: no rules from it
        return []


class _Rules:
    """One `.gitignore` file's spec, with one combined regex that tells fast when none of its lines can match."""

    def __init__(self, lines: list[str]) -> None:
        self.spec = GitIgnoreSpec.from_lines(lines)
        parts = [p.regex.pattern for p in self.spec.patterns if p.include is not None and p.regex is not None]
        try:  # group names repeat between patterns: made non-capturing for the combined regex
            self.any = re.compile("|".join(f"(?:{_GROUP.sub('(?:', part)})" for part in parts)) if parts else None
        except re.error:
            self.any = None
        self.empty = not parts

    def decide(self, tail: str) -> bool | None:
        """True ignored, False re-included by a `!` line, None when no line matches."""
        if self.empty or (self.any is not None and self.any.search(tail) is None):
            return None
        return self.spec.check_file(tail).include


_GROUP = re.compile(r"\(\?P<[A-Za-z_]\w*>")


def module_name(filename: str) -> str | None:
    """The module a file named so would be imported as (`_version.py`, `_speedups.cpython-37m-x86_64-linux-gnu.so`
    -> `_speedups`), or None for any other file (bytecode too: never trusted, never copied)."""
    if filename.endswith(".py"):
        stem = filename[:-3]
    elif filename.endswith((".so", ".pyd")):  # an extension module built in place, for any interpreter
        stem = filename.split(".", 1)[0]
    else:
        return None
    return stem if stem.isidentifier() else None


def imported_names(source: str) -> set[str]:
    """Every dotted part and imported name of a module's import statements (`from ._version import v` -> _version,
    v; `import pkg.version as x` -> pkg, version): a superset of the sibling modules it may import."""
    names: set[str] = set()
    for match in _IMPORT.finditer(source):
        module, imported, plain = match.groups()
        for part in (module or "", imported or "", plain or ""):
            names.update(re.findall(r"[A-Za-z_]\w*", part))
    return names


def tracked_but_ignored(root: Path) -> set[str]:
    """Files git tracks under `root` that its ignore rules match (empty without git or a work tree)."""
    git = shutil.which("git")
    if git is None or not (root / ".git").exists():
        return set()
    argv = [git, *USER_REPO_OPTIONS, "-C", str(root), "ls-files", "-z", "--cached", "--ignored",
            "--exclude-standard"]
    try:
        done = subprocess.run(argv, capture_output=True, timeout=GIT_TIMEOUT_S, check=False)
    except (OSError, subprocess.TimeoutExpired):
        return set()
    if done.returncode != 0:
        return set()
    return {name for name in done.stdout.decode("utf-8", "surrogateescape").split("\0") if name}


class IgnoreRules:
    """The `.gitignore` rules of one workspace, loaded folder by folder as a walk enters them."""

    def __init__(self, root: Path) -> None:
        self.root = Path(root)
        self._specs: dict[str, _Rules] = {}
        self._loaded: set[str] = set()
        self._tracked: set[str] | None = None  # tracked files a rule matches, and their folders
        self._imports: dict[str, set[str]] = {}  # folder -> names its kept .py files import

    def _kept(self, rel: str) -> bool:
        if self._tracked is None:
            files = tracked_but_ignored(self.root) if self._specs else set()
            folders = {"/".join(f.split("/")[:n]) for f in files for n in range(1, f.count("/") + 1)}
            self._tracked = files | folders
        return rel in self._tracked

    def enter(self, rel_dir: str) -> None:
        """Load the rules of the folder `rel_dir` ("" for the root) once; cheap when it has none."""
        if rel_dir in self._loaded:
            return
        self._loaded.add(rel_dir)
        folder = self.root / rel_dir if rel_dir else self.root
        lines = _read_lines(folder / GITIGNORE)
        if not rel_dir:
            lines = _read_lines(self.root / ".git" / "info" / "exclude") + lines
        if any(line.strip() and not line.lstrip().startswith("#") for line in lines):
            self._specs[rel_dir] = _Rules(lines)

    def matches(self, rel: str, is_dir: bool) -> bool:
        """Whether the rules of `rel`'s enclosing folders ignore `rel` itself (its folders not checked), but for a
        module that a kept module beside it imports (the module docstring)."""
        if not self._ruled_out(rel, is_dir):
            return False
        name = None if is_dir else module_name(rel.rsplit("/", 1)[-1])
        return name is None or name not in self.imported_by_siblings(rel.rpartition("/")[0])

    def imported_by_siblings(self, folder: str) -> set[str]:
        """The names the kept `.py` files directly in `folder` ("" for the root) import (read once per folder)."""
        if folder not in self._imports:
            names: set[str] = set()
            base = self.root / folder if folder else self.root
            try:
                files = sorted(p for p in base.iterdir() if p.suffix == ".py" and p.is_file())
            except OSError:
                files = []
            for path in files:
                rel = f"{folder}/{path.name}" if folder else path.name
                if self._ruled_out(rel, is_dir=False):
                    continue
                try:
                    with open(path, encoding="utf-8", errors="replace") as handle:
                        names |= imported_names(handle.read(IMPORTER_BYTES))
                except OSError:
                    continue
            self._imports[folder] = names
        return self._imports[folder]

    def _ruled_out(self, rel: str, is_dir: bool) -> bool:
        """What the `.gitignore` rules and git's tracked files alone say of `rel`."""
        decision = False
        suffix = "/" if is_dir else ""
        for base, rules in self._specs.items():  # loaded top-down: deeper files come later and win
            if base and not rel.startswith(base + "/"):
                continue
            include = rules.decide(rel[len(base) + 1:] + suffix if base else rel + suffix)
            if include is not None:
                decision = include
        return decision and not self._kept(rel)

    def ignored(self, rel: str) -> bool:
        """Whether `rel` (a workspace-relative POSIX path) is left out: a skipped or ignored folder, or a rule."""
        parts = PurePosixPath(rel).parts
        for depth in range(len(parts)):
            folder = "/".join(parts[:depth])
            self.enter(folder)
            if depth and (skip_dir(parts[depth - 1]) or self.matches(folder, is_dir=True)):
                return True
        return bool(parts) and (skip_dir(parts[-1]) or self.matches(rel, is_dir=(self.root / rel).is_dir()))
