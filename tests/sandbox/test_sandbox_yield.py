"""Test runs yield the CPU to a local model's server: their scheduler autogroup (or container) is weighed low."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from sandbox_support import make_backend

from agent_core.sandbox.docker.limits import container_options
from agent_core.sandbox.launcher import YIELD_NICE


def _nice_of(stat_line: str) -> int:
    """The nice field of a /proc/PID/stat line (the 19th; the command name before it may hold spaces)."""
    return int(stat_line.rsplit(")", 1)[1].split()[16])


@pytest.mark.parametrize("backend", ["bubblewrap", "process"])
async def test_a_run_and_its_children_are_at_the_lowest_weight(workspace: Path, backend: str):
    """Every process of a run has nice YIELD_NICE; where the run has a scheduler autogroup (its own session,
    weighed as one whatever its processes' nice), that group has YIELD_NICE too. A caller in the root
    autogroup, or on a machine that schedules by cpu cgroup (containers, CI), reads /proc/self/autogroup
    empty; the run may still get a group of its own there (its new session), and the process nice counts."""
    script = "cat /proc/self/stat; echo ==; cat /proc/self/autogroup; echo ==; sh -c 'cat /proc/self/stat'"
    before = os.getpriority(os.PRIO_PROCESS, 0), Path("/proc/self/autogroup").read_text().strip()
    result = await make_backend(backend).run(["sh", "-c", script], workspace)
    assert result.exit_code == 0, result.stderr
    stat, group, child_stat = (part.strip() for part in result.stdout.split("==\n"))
    assert _nice_of(stat) == YIELD_NICE and _nice_of(child_stat) == YIELD_NICE, result.stdout
    own = Path("/proc/self/autogroup").read_text().strip()
    # the caller stays as it was (a suite run under `nice`, or in an autogroup weighed low, included)
    assert (os.getpriority(os.PRIO_PROCESS, 0), own) == before, "the run changed its caller's weight"
    if group:  # the run's session is an autogroup: weighed at YIELD_NICE
        assert group.endswith(f"nice {YIELD_NICE}"), group
    if own:  # the caller has an autogroup: the run's is another one
        assert group and group.split()[0] != own.split()[0], (group, own)


def test_a_container_is_weighed_below_a_default_process(tmp_path: Path):
    settings = make_backend("process").settings
    assert container_options(settings, tmp_path, 30)["cpu_shares"] < 1024
