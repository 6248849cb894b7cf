"""The process backend's interpreter: chosen outside /root when needed, with pytest, hypothesis, coverage importable.

(The bubblewrap backend runs the project's own environment: test_sandbox_environment.py.)
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

from sandbox_support import make_backend

from agent_core.sandbox.constants import TEST_TOOLS
from agent_core.sandbox.runtime import (
    readable_by_others,
    resolve_runtime,
    sandbox_distributions,
)


def test_runtime_is_readable_by_the_sandbox_uid() -> None:
    runtime = resolve_runtime(None)
    assert readable_by_others(Path(runtime.python))
    if os.geteuid() == 0:
        assert runtime.uid == 65534
    if runtime.site_dir is not None:
        assert runtime.site_dir.name.startswith("agentls-site-")
        assert stat.S_IMODE(runtime.site_dir.stat().st_mode) == 0o755
        assert (runtime.site_dir / ".complete").is_file()
        assert (runtime.site_dir / "_pytest").is_dir() and (runtime.site_dir / "hypothesis").is_dir()
        assert resolve_runtime(None).site_dir == runtime.site_dir  # cached and reused


def test_explicit_python_setting_wins() -> None:
    assert resolve_runtime("/usr/bin/python3").python == "/usr/bin/python3"


def test_test_distributions_follow_requirements() -> None:
    names = {d.metadata["Name"].lower() for d in sandbox_distributions()}
    assert set(TEST_TOOLS) <= names
    assert {"pluggy", "iniconfig", "packaging", "sortedcontainers"} <= names
    assert "numpy" not in names  # extras are not followed


async def test_test_packages_import_inside_the_sandbox(workspace: Path) -> None:
    sandbox = make_backend("process")
    code = "import sys, pytest, hypothesis, coverage; print(sys.version_info[:2], pytest.__version__)"
    result = await sandbox.run([sandbox.python, "-c", code], workspace)
    assert result.exit_code == 0, result.stderr
    import pytest as host_pytest

    assert f"{tuple(sys.version_info[:2])} {host_pytest.__version__}" in result.stdout
