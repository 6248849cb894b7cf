"""Fixtures of the headless editor tests: the buggy project and the server's TMPDIR."""

from __future__ import annotations

import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest

pytest.register_assert_rewrite("editors_support")  # its checks report like a test's own asserts

from editors_support import CALC, TEST_CALC  # noqa: E402


@pytest.fixture
def editor_workspace(tmp_path: Path) -> Path:
    root = tmp_path / "ws"
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "tests" / "test_calc.py").write_text(TEST_CALC)
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    return root


@pytest.fixture
def server_tmp() -> Iterator[Path]:
    """TMPDIR for the server: under /tmp and world-searchable, since the sandbox uid must reach shadow copies."""
    path = Path(tempfile.mkdtemp(prefix="agentls-editor-tmp-"))
    path.chmod(0o1777)
    try:
        yield path
    finally:
        shutil.rmtree(path, ignore_errors=True)
