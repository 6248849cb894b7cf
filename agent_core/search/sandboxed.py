"""Runs driver_script.py in the sandbox (one process per call) and reads its JSON result.

The script is copied into the shadow's `.agentls/search/` (never part of a
change set) and removed again with its config and result afterwards. A run
that produces no result (timeout, crash, limit) comes back as None: the
search is an optimisation and its failures are data, never the run's end.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from agent_core.sandbox.base import Sandbox
from agent_core.search.mutants import Mutant

DRIVER_DIR = ".agentls/search"
_SCRIPT = Path(__file__).with_name("driver_script.py")
_SWAP = Path(__file__).with_name("driver_swap.py")  # imported by the script in the sandbox


async def run_driver(sandbox: Sandbox, root: Path, config: dict[str, Any], timeout_s: float) -> dict[str, Any] | None:
    """Run the driver with `config` on `root`; its JSON result, or None when it wrote none."""
    folder = root / DRIVER_DIR
    folder.mkdir(parents=True, exist_ok=True)
    try:
        shutil.copyfile(_SCRIPT, folder / "driver.py")
        shutil.copyfile(_SWAP, folder / "driver_swap.py")
        (folder / "config.json").write_text(json.dumps({**config, "out": f"{DRIVER_DIR}/result.json"}))
        await sandbox.run([sandbox.python, f"{DRIVER_DIR}/driver.py", f"{DRIVER_DIR}/config.json"], root,
                          timeout_s=timeout_s)
        out = folder / "result.json"
        return json.loads(out.read_text()) if out.is_file() else None
    except (OSError, ValueError):
        return None
    finally:
        shutil.rmtree(folder, ignore_errors=True)


async def collect_coverage(sandbox: Sandbox, root: Path, pytest_args: list[str], timeout_s: float,
                           test_timeout_s: float, select: list[str] | None = None) -> dict | None:
    """{"coverage", "outcomes", "files"} of one suite run with per-test coverage contexts (only the tests
    under the node ids `select`, when given), or None."""
    config = {"mode": "localize", "args": pytest_args, "test_timeout_s": test_timeout_s, "select": select or []}
    return await run_driver(sandbox, root, config, timeout_s)


async def try_mutants(
    sandbox: Sandbox, root: Path, nodeids: list[str], mutants: list[Mutant], *, mutant_timeout_s: float,
    budget_s: float, max_passing: int, covering: Callable[[Mutant], list[str]] | None = None, hot: bool = False,
) -> tuple[list[tuple[Mutant, str]], str | None]:
    """Each tried mutant with its outcome on `nodeids` (passed/failed/timeout), and why the driver stopped.

    With `covering`, each mutant also runs the tests it names for that mutant (after `nodeids`). With `hot`,
    the suite is collected once and each mutant swapped into its live function (driver_swap.py); the mutants
    that cannot be swapped are then tried the slow way, within what is left of the budget.
    """
    if not hot:
        return await _try(sandbox, root, nodeids, mutants, mutant_timeout_s, budget_s, max_passing, covering, False)
    started = time.monotonic()
    results, stopped = await _try(sandbox, root, nodeids, mutants, mutant_timeout_s, budget_s, max_passing,
                                  covering, True)
    cold = [m for m, outcome in results if outcome == "unswappable"]
    done = [(m, outcome) for m, outcome in results if outcome != "unswappable"]
    left = budget_s - (time.monotonic() - started)
    passing = sum(outcome == "passed" for _, outcome in done)
    if cold and left > 0 and passing < max_passing:
        more, stopped_cold = await _try(sandbox, root, nodeids, cold, mutant_timeout_s, left, max_passing - passing,
                                        covering, False)
        done += more
        if stopped != "enough":
            stopped = stopped_cold
        if len(more) < len(cold) and stopped is None:
            stopped = stopped_cold or "budget"
    return done, stopped


async def _try(
    sandbox: Sandbox, root: Path, nodeids: list[str], mutants: list[Mutant], mutant_timeout_s: float,
    budget_s: float, max_passing: int, covering: Callable[[Mutant], list[str]] | None, hot: bool,
) -> tuple[list[tuple[Mutant, str]], str | None]:
    entries: list[dict[str, Any]] = [{"id": i, "path": m.path, "line": m.line, "text": m.text, "end": m.last}
                                     for i, m in enumerate(mutants)]
    collected = list(nodeids)
    if covering is not None:
        for entry, mutant in zip(entries, mutants, strict=True):
            entry["tests"] = tests = covering(mutant)
            collected += tests
    if covering is not None or hot:
        # pytest collects their files and each child keeps its own tests by node id: one id pytest would not
        # resolve as an argument (an odd parameter id) must not turn every mutant into a usage error.
        collected = [nodeid.split("::", 1)[0] for nodeid in collected]
    config = {"mode": "mutants", "nodeids": list(dict.fromkeys(collected)), "failing": nodeids, "hot": hot,
              "timeout_s": mutant_timeout_s, "budget_s": budget_s, "max_passing": max_passing, "mutants": entries}
    # The driver keeps its own budget; the sandbox bound only catches a driver that stops answering.
    data = await run_driver(sandbox, root, config, timeout_s=budget_s + 2 * mutant_timeout_s + 30)
    if data is None:
        return [], "driver produced no result"
    return [(mutants[r["id"]], r["outcome"]) for r in data["results"]], data.get("stopped")
