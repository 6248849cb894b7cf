"""A unified diff applied to a tree by `git apply`, after its paths are listed and checked.

`git apply` is the well-kept implementation of the format (git's own and
plain `diff -u` output, new and deleted files, renames, `--recount` for hunk
headers whose counts a hand-written or generated diff got wrong, and
`--unidiff-zero` so a hunk with less trailing context than leading, as
agents write them, is not pinned to the end of its file); it runs in
the tree with no repository and no configuration (workspace/gitenv.py: a
tree laid out as a git directory, with filters in its `config`, is just
files), and refuses paths that leave the tree or pass a symbolic link.
What it touches is listed first (`--numstat -z`, nothing written) so the
caller can refuse a diff before any file changes.
"""

from __future__ import annotations

import re
import shutil
import subprocess
from dataclasses import dataclass
from pathlib import Path

from agent_core.workspace.gitenv import copy_git_env

GIT_TIMEOUT_S = 60
_NAME = re.compile(r"^(---|\+\+\+) (\S+)", re.MULTILINE)


class DiffError(ValueError):
    """The diff is malformed or does not apply to the tree (the text says why)."""


@dataclass(frozen=True)
class Diff:
    """A diff's text, the prefix depth `git apply -p` strips, and every path it touches (old and new names)."""

    text: str
    strip: int
    paths: tuple[str, ...]


def strip_depth(text: str) -> int:
    """1 when every `---`/`+++` name carries git's `a/` / `b/` prefix (or is /dev/null), else 0."""
    names = [(mark, name) for mark, name in _NAME.findall(text) if name != "/dev/null"]
    prefixed = all(name.startswith("a/" if mark == "---" else "b/") for mark, name in names)
    return 1 if names and prefixed else 0 if names else 1  # a git diff of renames only has no ---/+++ lines


def _git(args: list[str], root: Path, text: str) -> subprocess.CompletedProcess[bytes]:
    git = shutil.which("git")
    if git is None:
        raise DiffError("applying a diff needs git on PATH")
    try:
        return subprocess.run([git, "apply", *args], cwd=root, input=text.encode(), capture_output=True,
                              timeout=GIT_TIMEOUT_S, env=copy_git_env(), check=False)
    except subprocess.TimeoutExpired as exc:
        raise DiffError(f"git apply did not finish in {GIT_TIMEOUT_S} s") from exc


_GIT_HINT = re.compile(r'\s*\(allow with "--[\w-]+"\)')  # an option of git's, no use to a diff's author
_PLAIN = {"No valid patches in input": "no file's changes in it (a unified diff has `--- a/path`, `+++ b/path` "
                                       "and `@@` hunks)"}


def _why(done: subprocess.CompletedProcess[bytes]) -> str:
    """git's complaint in plain words: its "error: " prefixes and its own options' hints left out."""
    lines = [_GIT_HINT.sub("", line).removeprefix("error: ").strip()
             for line in done.stderr.decode(errors="replace").splitlines() if line.strip()]
    return "; ".join(_PLAIN.get(line, line) for line in lines[:6]) or f"git apply exited with {done.returncode}"


def _numstat_paths(output: bytes) -> list[str]:
    """Paths from `--numstat -z`: `add\\tdel\\tpath\\0`, or `add\\tdel\\t\\0old\\0new\\0` for a rename or copy."""
    fields = output.decode(errors="surrogateescape").split("\0")
    paths: list[str] = []
    index = 0
    while index < len(fields):
        entry = fields[index]
        index += 1
        if not entry:
            continue
        name = entry.split("\t", 2)[2] if entry.count("\t") >= 2 else ""
        if name:
            paths.append(name)
        else:  # a rename: the old and new names follow as their own fields
            paths += [p for p in fields[index:index + 2] if p]
            index += 2
    return paths


def read_diff(text: str, root: Path) -> Diff:
    """Parse `text` against the tree `root` (nothing written); DiffError when git cannot read it."""
    if not text.strip():
        raise DiffError("the diff is empty")
    if not text.endswith("\n"):
        text += "\n"
    strip = strip_depth(text)
    done = _git([f"-p{strip}", "--recount", "--numstat", "-z", "-"], root, text)
    if done.returncode != 0:
        raise DiffError(f"the diff cannot be read: {_why(done)}")
    paths = tuple(dict.fromkeys(_numstat_paths(done.stdout)))
    if not paths:
        raise DiffError("the diff changes no file")
    if re.search(rb"(?:^|\0)-\t-\t", done.stdout):
        raise DiffError("the diff holds a binary change: only changes to UTF-8 text files can be verified")
    for rel in paths:
        _require_text(root, rel)
    return Diff(text, strip, paths)


def _require_text(root: Path, rel: str) -> None:
    """DiffError when the file `rel` the diff changes exists and is not UTF-8 text (binary, another encoding)."""
    target = root / rel
    if not target.is_file() or target.is_symlink():
        return
    data = target.read_bytes()
    try:
        data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DiffError(f"{rel} is not UTF-8 text (byte {exc.start}): only changes to UTF-8 text files can be "
                        "verified") from None
    if b"\0" in data:
        raise DiffError(f"{rel} is a binary file: only changes to UTF-8 text files can be verified")


def _apply_args(diff: Diff) -> list[str]:
    return [f"-p{diff.strip}", "--recount", "--unidiff-zero", "--whitespace=nowarn"]


def check_diff(diff: Diff, root: Path) -> None:
    """DiffError when `diff` does not apply to the tree `root` (nothing written)."""
    check = _git([*_apply_args(diff), "--check", "-"], root, diff.text)
    if check.returncode != 0:
        raise DiffError(f"the diff does not apply: {_why(check)}")


def apply_diff(diff: Diff, root: Path) -> None:
    """Apply `diff` to the tree `root`, all or nothing (git checks every hunk first); DiffError when it does not
    apply."""
    check_diff(diff, root)
    done = _git([*_apply_args(diff), "-"], root, diff.text)
    if done.returncode != 0:
        raise DiffError(f"the diff does not apply: {_why(done)}")
