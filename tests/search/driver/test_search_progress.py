"""The search driver's live count: the host hears how many mutants are tried while the driver runs (the CLI's
bar and the editor's progress show it), in a real bubblewrap sandbox."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from agent_core.sandbox.factory import make_sandbox
from agent_core.search.candidate import Mutant
from agent_core.search.driver.sandboxed import DRIVER_DIR, try_mutants
from agent_core.settings import SandboxSettings
from agent_core.workspace.shadow import ShadowWorkspace

pytestmark = pytest.mark.e2e  # every test here runs a real sandbox

PROJECT = {
    "slow.py": "import time\n\n\ndef add(a, b):\n    time.sleep(0.4)\n    return a - b\n",
    "test_slow.py": "from slow import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n",
}


def test_the_count_of_mutants_tried_arrives_while_the_driver_runs(tmp_path: Path) -> None:
    for rel, text in PROJECT.items():
        (tmp_path / rel).write_text(text)
    wrong = [Mutant("slow.py", 6, f"    return a - b - {k}", f"minus {k}") for k in range(1, 8)]
    counts: list[int] = []
    with ShadowWorkspace(tmp_path) as shadow:
        sandbox = make_sandbox(SandboxSettings(backend="bubblewrap", timeout_s=120))

        results, _ = asyncio.run(try_mutants(
            sandbox, shadow.root, ["test_slow.py::test_add"], wrong, mutant_timeout_s=10, budget_s=60, max_passing=1,
            on_progress=counts.append))
        assert not (shadow.root / DRIVER_DIR).exists(), "the count's file goes with the driver's folder"
    assert [outcome for _, outcome in results] == ["failed"] * len(wrong)
    assert counts and counts == sorted(counts) and counts[-1] <= len(wrong), counts
    assert any(0 < done < len(wrong) for done in counts), f"a count from the middle of the run: {counts}"
