"""Test runs yield the CPU to a local model's server: their scheduler autogroup (or container) is weighed low."""

from __future__ import annotations

from pathlib import Path

import pytest
from sandbox_support import make_backend

from agent_core.sandbox.docker.limits import container_options
from agent_core.sandbox.launcher import YIELD_NICE


@pytest.mark.parametrize("backend", ["bubblewrap", "process"])
async def test_a_run_and_its_children_are_in_an_autogroup_at_the_lowest_weight(workspace: Path, backend: str):
    result = await make_backend(backend).run(
        ["sh", "-c", "cat /proc/self/autogroup; sh -c 'cat /proc/self/autogroup'"], workspace)
    assert result.exit_code == 0, result.stderr
    lines = result.stdout.splitlines()
    assert len(lines) == 2 and all(line.endswith(f"nice {YIELD_NICE}") for line in lines), lines
    own = Path("/proc/self/autogroup").read_text().split()[0]
    assert lines[0].split()[0] != own, "its own group, not the caller's (whose weight stays as it was)"
    assert Path("/proc/self/autogroup").read_text().rstrip().endswith("nice 0")


def test_a_container_is_weighed_below_a_default_process(tmp_path: Path):
    settings = make_backend("process").settings
    assert container_options(settings, tmp_path, 30)["cpu_shares"] < 1024
