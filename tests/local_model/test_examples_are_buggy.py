"""The demo's example projects each have exactly the bug their README names: tests fail, and pass once fixed."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

EXAMPLES = Path(__file__).resolve().parents[2] / "examples"

# example -> (file, buggy text, fixed text)
FIXES = {
    "pagination": ("pager/pages.py", "    start = page * size\n", "    start = (page - 1) * size\n"),
    "temperature": ("thermo/convert.py", "(fahrenheit + 32)", "(fahrenheit - 32)"),
    "digits": (
        "numtools/digits.py",
        '    """Repeat the digit sum until one digit is left."""\n',
        '    """Repeat the digit sum until one digit is left."""\n    if n < 10:\n        return n\n',
    ),
}


def _pytest(project: Path) -> subprocess.CompletedProcess:
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    return subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=project,
                          capture_output=True, text=True, env=env, timeout=60)


def test_every_example_is_covered():
    assert sorted(p.name for p in EXAMPLES.iterdir() if (p / "README.md").is_file()) == sorted(FIXES)


@pytest.mark.parametrize("name", sorted(FIXES))
def test_example_fails_then_passes_when_fixed(name: str, tmp_path: Path):
    project = tmp_path / name
    shutil.copytree(EXAMPLES / name, project)
    assert _pytest(project).returncode == 1, "the shipped example must have a failing test"
    rel, buggy, fixed = FIXES[name]
    source = (project / rel).read_text()
    assert source.count(buggy) == 1
    (project / rel).write_text(source.replace(buggy, fixed))
    result = _pytest(project)
    assert result.returncode == 0, result.stdout[-2000:]
