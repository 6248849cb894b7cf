"""Bytecode and test caches are not trusted: removed from a workspace copy before each test run.

Python imports `__pycache__/mod.cpython-3X.pyc` instead of `mod.py` when the
cache's header matches the source's size and time, pytest does the same with
its own rewritten test modules, and a lone `mod.pyc` beside no `mod.py` is a
module of its own. Code under test can write any of these during one run to
decide the next (a forged `tests/__pycache__/test_x.cpython-311.pyc` whose
tests all pass). The runner calls `remove_bytecode` on the copy before each
run, and the runs write none (`PYTHONDONTWRITEBYTECODE=1`). `.pytest_cache`
(last-failed lists and other plugin state) goes too. The walk never follows
a link: a link named like a cache is removed as a link.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

BYTECODE_SUFFIXES = (".pyc", ".pyo")
CACHE_DIRS = frozenset({"__pycache__", ".pytest_cache"})


def _remove(path: str) -> None:
    try:
        if os.path.islink(path) or not os.path.isdir(path):
            os.unlink(path)
        else:
            shutil.rmtree(path)
    except OSError:
        pass  # a file the run's uid left read-only is retried at the next run; the run still writes no bytecode


def remove_bytecode(root: Path) -> int:
    """Remove every bytecode file and cache folder under `root`; return how many entries went."""
    removed = 0
    for dirpath, dirnames, filenames in os.walk(root):
        for name in [d for d in dirnames if d in CACHE_DIRS]:
            _remove(os.path.join(dirpath, name))
            removed += 1
        dirnames[:] = [d for d in dirnames if d not in CACHE_DIRS and d != ".git"]
        for name in filenames:
            if name.endswith(BYTECODE_SUFFIXES) or name in CACHE_DIRS:
                _remove(os.path.join(dirpath, name))
                removed += 1
    return removed
