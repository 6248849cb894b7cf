"""What judges a run: the one definition of test files and of the files that configure the test run.

A fix run is verified by running the project's tests. Whatever decides pass or
fail must stay out of the candidate's reach, so every layer asks this module
(and only this module) which paths belong to the verification:

- `is_test_file`: test modules and their data (`test_*`, `*_test.py`) and
  anything under a `tests/` or `test/` folder.
- `is_test_config`: files that change how the tests are collected, run or
  reported without being tests: `conftest.py` anywhere, pytest's
  configuration files (`pytest.ini`, `.pytest.ini`, `pytest.toml`,
  `.pytest.toml`, `pyproject.toml`, `setup.cfg`, `tox.ini`), modules the
  interpreter imports on its own at start-up (`sitecustomize`,
  `usercustomize`), `.pth` files, and a top-level module or package that would
  shadow the test runner itself (`pytest`, `_pytest`, `pluggy`).
- `is_protected`: either of the two.

`protected_files` lists those a test run executes or reads in a tree, skipping what a shadow copy skips (a
symbolic link is listed by its target, `SYMLINK` + target, never followed);
`restore_protected` puts a tree's protected files back as such a listing has them.
The name rule is the fallback: in a fix run, the files the project's pytest
collected at the baseline join such a listing too (`collected_entries`,
pipeline/protected_tests.py), whatever their names, and so do the data
modules those test files import their values from (`imported_data_entries`:
a root `fixtures.py` holding the expected values is part of the tests).
"""

from __future__ import annotations

import ast
import os
import re
import shutil
from collections.abc import Iterable, Mapping
from pathlib import Path, PurePath, PurePosixPath

from agent_core.workspace.ignore import skip_dir

TEST_DIRS = frozenset({"tests", "test"})
CONFIG_NAMES = frozenset({
    "conftest.py", "pytest.ini", ".pytest.ini", "pytest.toml", ".pytest.toml", "pyproject.toml", "setup.cfg",
    "tox.ini",
})
SYMLINK = b"\0symlink\0"  # prefix of a listed symbolic link's entry, followed by its target
STARTUP_MODULES = frozenset({"sitecustomize", "usercustomize"})  # imported by `site` before any test runs
RUNNER_MODULES = frozenset({"pytest", "_pytest", "pluggy"})  # shadowed from the workspace root


def _parts(rel: str | PurePath) -> tuple[str, ...]:
    return PurePosixPath(str(rel).replace("\\", "/")).parts


def is_test_file(rel: str | PurePath) -> bool:
    """A test module or its data: `test_*`, `*_test.py`, or any file under a `tests/` or `test/` folder."""
    parts = _parts(rel)
    if not parts:
        return False
    name = parts[-1]
    return name.startswith("test_") or name.endswith("_test.py") or any(part in TEST_DIRS for part in parts[:-1])


def is_test_config(rel: str | PurePath) -> bool:
    """A file that configures or hooks into the test run: conftest, pytest config, start-up hooks, .pth."""
    parts = _parts(rel)
    if not parts:
        return False
    name = parts[-1]
    if name in CONFIG_NAMES or name.endswith(".pth"):
        return True
    stems = [PurePosixPath(p).stem if i == len(parts) - 1 else p for i, p in enumerate(parts)]
    if any(stem in STARTUP_MODULES for stem in stems):
        return True
    return stems[0] in RUNNER_MODULES and (len(parts) > 1 or name.endswith(".py"))


def is_protected(rel: str | PurePath) -> bool:
    """Part of the verification: a test file or a test configuration/support file."""
    return is_test_file(rel) or is_test_config(rel)


def runs_in_verification(rel: str | PurePath) -> bool:
    """Code or configuration the test run executes or reads: test configuration, and test files ending in .py.

    A test's data file is protected from the coder's edits too (`is_protected`),
    but the tests themselves may write files under tests/, so only these are
    guarded around each test run.
    """
    return is_test_config(rel) or (is_test_file(rel) and str(rel).endswith(".py"))


def protected_files(root: Path) -> dict[str, bytes]:
    """Every file under `root` that `runs_in_verification` (relative POSIX path -> bytes, or SYMLINK + target).

    Folders `skip_dir` names are left out, as the shadow copy leaves them out.
    """
    found: dict[str, bytes] = {}
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = sorted(d for d in dirnames if not skip_dir(d))
        linked = [d for d in dirnames if os.path.islink(os.path.join(dirpath, d))]  # listed, not walked
        for name in [*filenames, *linked]:
            path = Path(dirpath, name)
            rel = path.relative_to(root).as_posix()
            if not runs_in_verification(rel):
                continue
            try:
                found[rel] = SYMLINK + os.fsencode(os.readlink(path)) if path.is_symlink() else path.read_bytes()
            except OSError:
                continue
    return found


def _entry(root: Path, rel: str) -> bytes | None:
    """A listing's entry for `root / rel`: SYMLINK + target for a link (never followed), the bytes of a
    regular file, None for anything else (or when a folder on the way inside `root` is a link)."""
    path = root / rel
    try:
        if any((root / parent).is_symlink() for parent in PurePosixPath(rel).parents):
            return None
        if path.is_symlink():
            return SYMLINK + os.fsencode(os.readlink(path))
        return path.read_bytes() if path.is_file() else None
    except OSError:
        return None


def collected_entries(root: Path, files: Iterable[str], known: Mapping[str, bytes]) -> dict[str, bytes]:
    """Listing entries for `files` (workspace-relative, as pytest collected them) not in `known` yet."""
    found: dict[str, bytes] = {}
    for rel in files:
        parts = _parts(rel)
        if not parts or ".." in parts or PurePosixPath(rel).is_absolute() or rel in known:
            continue
        entry = _entry(root, rel)
        if entry is not None:
            found[rel] = entry
    return found


def _imported_modules(root: Path, rel: str) -> set[str]:
    """Workspace-relative `.py` paths the test file `rel` may import by its import statements (from the root, or
    beside the test file for a relative import)."""
    try:
        tree = ast.parse((root / rel).read_text(encoding="utf-8"))
    except (OSError, SyntaxError, ValueError, UnicodeDecodeError):
        return set()
    found: set[str] = set()
    here = PurePosixPath(rel).parent
    for node in ast.walk(tree):
        names = ([(a.name, 0) for a in node.names] if isinstance(node, ast.Import)
                 else [(node.module or "", node.level)] if isinstance(node, ast.ImportFrom) else [])
        for name, level in names:
            base = here.joinpath(*[".."] * (level - 1)) if level else PurePosixPath()
            if name:
                found.add(os.path.normpath(base.joinpath(*name.split("."))) + ".py")
    return {p for p in found if not p.startswith("..")}


def _data_only(text: str) -> bool:
    """A module that only holds values: no function or class anywhere in it."""
    try:
        tree = ast.parse(text)
    except (SyntaxError, ValueError):
        return False
    return not any(isinstance(n, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef, ast.Lambda))
                   for n in ast.walk(tree))


def _imported_by_code(root: Path, module: str) -> bool:
    """Whether a Python file outside the tests imports the dotted `module`."""
    pattern = re.compile(rf"^\s*(?:from\s+{re.escape(module)}\s+import\b|import\s+{re.escape(module)}\b)", re.M)
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames[:] = [d for d in dirnames if not skip_dir(d)]
        for name in filenames:
            rel = Path(dirpath, name).relative_to(root).as_posix()
            if name.endswith(".py") and not is_protected(rel):
                try:
                    if pattern.search(Path(dirpath, name).read_text(encoding="utf-8", errors="replace")):
                        return True
                except OSError:
                    continue
    return False


def imported_data_entries(root: Path, test_files: Iterable[str], known: Mapping[str, bytes]) -> dict[str, bytes]:
    """Listing entries for the modules of the workspace the test files import their values from: a module
    holding only values (no function or class) that no code outside the tests imports. Its values are the tests'
    expectations (`EXPECTED = 5` in a root `fixtures.py`): a change to them changes the tests."""
    found: dict[str, bytes] = {}
    for test in sorted({t for t in test_files if t.endswith(".py")}):
        for rel in sorted(_imported_modules(root, test)):
            if rel in known or rel in found or is_protected(rel):
                continue
            entry = _entry(root, rel)
            if entry is None or entry.startswith(SYMLINK) or not _data_only(entry.decode("utf-8", "replace")):
                continue
            if not _imported_by_code(root, rel[:-3].replace("/", ".")):
                found[rel] = entry
    return found


def _real_parent(root: Path, rel: str) -> Path:
    """`root / rel`'s parent as a real directory inside `root`: a symlink or file in the way is removed."""
    current = root
    for part in PurePosixPath(rel).parts[:-1]:
        current = current / part
        if current.is_symlink() or (current.exists() and not current.is_dir()):
            current.unlink()
        current.mkdir(exist_ok=True)
    return current


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)


def restore_protected(root: Path, original: Mapping[str, bytes]) -> list[str]:
    """Put the protected files under `root` back as `original` lists them; return the paths that differed.

    A protected file `original` does not list is removed, a changed one gets
    its original bytes (or link) back, a removed one is recreated. Nothing is
    written through a symbolic link: a link in the way is removed first.
    """
    current = protected_files(root)
    for rel in original.keys() - current.keys():  # listed by collection, not by name: looked at directly
        entry = _entry(root, rel)
        if entry is not None:
            current[rel] = entry
    changed = sorted(rel for rel in original.keys() | current.keys() if original.get(rel) != current.get(rel))
    for rel in changed:
        target = _real_parent(root, rel) / PurePosixPath(rel).name
        _remove(target)
        data = original.get(rel)
        if data is None:
            continue
        if data.startswith(SYMLINK):
            os.symlink(os.fsdecode(data[len(SYMLINK):]), target)
        else:
            target.write_bytes(data)
    return changed
