"""How long the editor's background search takes to a verified quick fix, phase by phase.

Runs `find_quick_fix` (agent_core.quickfix) R times on a small
project with a one-token bug (`range(1, n)` in count_up) and N passing
filler tests, in the configured sandbox (bubblewrap by default), reniced as
in the editor, and prints localize / search+verify / total seconds (median
and max). Prints `uptime`'s load too: on a shared machine the figure is
only as good as the idle core it had.

    python -m bench.quickfix_latency [--repeats 3] [--filler 40] [--no-nice]
"""

from __future__ import annotations

import argparse
import asyncio
import os
import statistics
import tempfile
from pathlib import Path

from agent_core.models import TestReport
from agent_core.quickfix import find_quick_fix
from agent_core.sandbox.factory import make_sandbox
from agent_core.settings import SandboxSettings, SearchSettings, Settings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace

COUNT = "def count_up(n):\n    return list(range(1, n))\n\n\ndef double(x):\n    return 2 * x\n"
TESTS = "from count import count_up, double\n\n\ndef test_count_up():\n    assert count_up(3) == [1, 2, 3]\n"


def make_project(root: Path, filler: int) -> None:
    (root / "count.py").write_text(COUNT)
    body = "".join(f"\n\ndef test_double_{i}():\n    assert double({i}) == {2 * i}\n" for i in range(filler))
    (root / "test_count.py").write_text(TESTS + body)


async def failing_report(settings: Settings, root: Path) -> TestReport:
    with ShadowWorkspace(root) as shadow:
        return await run_tests(make_sandbox(settings), shadow.root, settings.test_command, settings.sandbox.timeout_s)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeats", type=int, default=3)
    parser.add_argument("--filler", type=int, default=40, help="passing tests besides the failing one")
    parser.add_argument("--no-nice", action="store_true", help="run at normal priority")
    args = parser.parse_args()
    settings = Settings(sandbox=SandboxSettings(timeout_s=120), search=SearchSettings(enabled=True))
    rows = []
    with tempfile.TemporaryDirectory(prefix="agentls-bench-") as tmp:
        root = Path(tmp)
        make_project(root, args.filler)
        report = asyncio.run(failing_report(settings, root))
        for _ in range(args.repeats):
            outcome = asyncio.run(find_quick_fix(settings, root, {}, report, nice=not args.no_nice))
            assert outcome.fix is not None, outcome.stats
            rows.append((outcome.stats["localize_s"], outcome.stats["search_s"], outcome.duration_s))
    print(f"load average {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; {args.filler + 1} tests; "
          f"fix: {outcome.fix.title}")
    for name, column in zip(("localize", "search+verify", "total"), zip(*rows, strict=True), strict=True):
        print(f"{name:>14}: median {statistics.median(column):6.2f} s   max {max(column):6.2f} s")


if __name__ == "__main__":
    main()
