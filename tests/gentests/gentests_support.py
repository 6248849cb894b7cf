"""Fixtures of the gen-tests area: a small shop workspace with a planted bug, and a coverage oracle."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

SHOP = '''"""A tiny shop module with one planted bug."""


def average(xs):
    """Return the arithmetic mean of xs.

    >>> average([2, 4])
    3.0
    """
    total = 0
    for x in xs:
        total += x
    return total / (len(xs) + 1)


def clamp(x, lo, hi):
    """Clamp x into the closed interval [lo, hi]."""
    if x < lo:
        return lo
    if x > hi:
        return hi
    return x
'''
PLANTED_LINE = 13  # `return total / (len(xs) + 1)`


@pytest.fixture
def shop_workspace(tmp_path: Path) -> Path:
    ws = tmp_path / "shopws"
    ws.mkdir()
    (ws / "pyproject.toml").write_text('[project]\nname = "shop"\nversion = "0"\n')
    (ws / "shop.py").write_text(SHOP)
    return ws


def measure_coverage(workspace: Path, test_files: list[str], target: str) -> float:
    """Statement coverage of `target` by `test_files`, measured here with coverage.py (an independent oracle)."""
    if not test_files:
        return 0.0
    data = workspace / ".oracle.coverage"
    subprocess.run([sys.executable, "-m", "coverage", "run", f"--data-file={data}", "--branch", f"--include={target}",
                    "-m", "pytest", "-q", "-p", "no:cacheprovider", *test_files],
                   cwd=workspace, capture_output=True, check=False)
    out = workspace / ".oracle.json"
    subprocess.run([sys.executable, "-m", "coverage", "json", f"--data-file={data}", "-o", str(out)],
                   cwd=workspace, capture_output=True, check=True)
    summary = json.loads(out.read_text())["files"][target]["summary"]
    data.unlink()
    out.unlink()
    return round(summary["percent_statements_covered"], 2)
