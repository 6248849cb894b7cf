"""Cancelling a gen-tests run mid-test removes the shadow copy and kills the sandboxed pytest."""

from __future__ import annotations

import asyncio
import json
import os
from pathlib import Path

from agent_core.events import NullHooks
from agent_core.gentests.deps import GenTestsDeps
from agent_core.gentests.run import run_gen_tests
from agent_core.models import RunRequest
from agent_core.settings import Settings
from agent_core.workspace.shadow import ShadowWorkspace


def _processes_in(root: Path) -> list[int]:
    found = []
    for entry in os.listdir("/proc"):
        if entry.isdigit():
            try:
                if os.readlink(f"/proc/{entry}/cwd").startswith(str(root)):
                    found.append(int(entry))
            except OSError:
                continue
    return found


async def test_cancel_cleans_up(scripted_llm, shop_workspace: Path):
    scripted_llm.add(
        "tester",
        json.dumps(
            {
                "tests": [
                    {
                        "name": "test_slow",
                        "kind": "pytest",
                        "target": "clamp",
                        "rationale": "r",
                        "code": (
                            "import time\nfrom shop import clamp\n\n\n"
                            "def test_slow():\n    time.sleep(60)\n    assert clamp(1, 0, 2) == 1\n"
                        ),
                    }
                ]
            }
        ),
    )
    settings = Settings(base_url=scripted_llm.base_url, max_iterations=1)
    hooks = NullHooks()
    shadows: list[ShadowWorkspace] = []

    def factory(source, overlays):
        shadows.append(ShadowWorkspace(source, overlays))
        return shadows[-1]

    deps = GenTestsDeps.build(settings, hooks)
    deps.shadow_factory = factory
    request = RunRequest(kind="gen_tests", workspace=shop_workspace, target_file="shop.py", target_symbol="clamp")
    task = asyncio.create_task(run_gen_tests(request, settings, hooks, deps))
    for _ in range(300):  # wait until the candidate test runs in the sandbox
        await asyncio.sleep(0.1)
        if shadows and shadows[0].path and _processes_in(shadows[0].path):
            break
    root = shadows[0].path
    assert _processes_in(root), "the sandboxed test never started"
    task.cancel()
    try:
        await task
    except asyncio.CancelledError:
        pass
    assert task.cancelled()
    await asyncio.sleep(0.5)
    assert not root.exists()
    assert _processes_in(root) == []
    assert not (shop_workspace / "tests").exists()
