"""Runs driver_script.py in the sandbox (one process per call) and reads its JSON result.

The script is copied into the shadow's `.agentls/search/` (never part of a
change set) and removed again with its config and result afterwards. A run
that produces no result (timeout, crash, limit) or ends before any test or
mutant ran (a usage error, a test file that does not import) comes back with
an "error" that says so, with the tail of its output: the search is an
optimisation and its failures are data, never the run's end, but never
silent either.
"""

from __future__ import annotations

import asyncio
import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core.sandbox.base import CommandResult, Sandbox
from agent_core.search.candidate import Mutant
from agent_core.testing.swallowed import SOURCE as SWALLOWED_SOURCE
from agent_core.workspace.hostread import fresh_dir, read_planted_text

DRIVER_DIR = ".agentls/search"
_SCRIPT = Path(__file__).parent.parent / "inside" / "driver_script.py"
_SIBLINGS = ("driver_localize.py", "driver_swap.py", "driver_trace.py", "driver_options.py")  # imported by the script
SWALLOWED_COPY = "driver_swallowed.py"  # testing/swallowed.py, under the name the script loads it by
ERROR_TAIL = 800  # characters of the driver's output kept in an error
PROGRESS_POLL_S = 1.0  # how often the host reads the driver's count of mutants tried
RESULT_CAP = 256 * 1024 * 1024  # the driver's result (per-test coverage of a big suite) read at most this far


Reach = tuple[int, str]  # a failing test's reach: the line of its own function its call failed at, the exception's type


@dataclass
class Reached:
    """Where each failing test's own function was when its call failed, and what it raised (the driver's "reach"
    mode, by test): with no mutant (`baseline`, the run's shadow as it is) and after each mutant tried (`of`, by
    its id)."""

    baseline: dict[str, Reach] = field(default_factory=dict)
    of: dict[int, dict[str, Reach]] = field(default_factory=dict)


def _reaches(data: Any) -> dict[str, Reach]:
    """{nodeid: (line, type)} of the driver's {nodeid: [line, type]} (anything else left out)."""
    out: dict[str, Reach] = {}
    for nodeid, value in (data or {}).items() if isinstance(data, dict) else ():
        if isinstance(value, list) and len(value) == 2 and isinstance(value[0], int):
            out[nodeid] = (value[0], str(value[1]))
    return out


def driver_error(result: CommandResult, error: str | None) -> str:
    """What went wrong in a driver run: its own error or why it wrote no result, and its output's tail."""
    if error is None:
        error = ("the search driver timed out" if result.timed_out else
                 f"the search driver wrote no result (exit {result.exit_code}"
                 + (f", {result.limit_hit} limit" if result.limit_hit else "") + ")")
    tail = (result.stderr.strip() or result.stdout.strip())[-ERROR_TAIL:]
    return f"{error}: {tail}" if tail else error


async def run_driver(sandbox: Sandbox, root: Path, config: dict[str, Any], timeout_s: float,
                     on_progress: Callable[[int], None] | None = None) -> dict[str, Any]:
    """Run the driver with `config` on `root`: its JSON result, with an "error" (driver_error) when it failed.
    `on_progress(done)` hears, about once a second, how many mutants the driver has tried so far."""
    folder = fresh_dir(root, DRIVER_DIR)  # never through a link a run planted (workspace/hostread.py)
    poll = asyncio.create_task(_poll_progress(root, on_progress)) if on_progress is not None else None
    try:
        shutil.copyfile(_SCRIPT, folder / "driver.py")
        for name in _SIBLINGS:
            shutil.copyfile(_SCRIPT.with_name(name), folder / name)
        shutil.copyfile(SWALLOWED_SOURCE, folder / SWALLOWED_COPY)  # a mutant's test that passes although its
        # own assertion raised (the mutant swallowed it) fails in the driver too (testing/swallowed.py)
        (folder / "config.json").write_text(json.dumps({**config, "out": f"{DRIVER_DIR}/result.json"}))
        result = await sandbox.run([sandbox.python, f"{DRIVER_DIR}/driver.py", f"{DRIVER_DIR}/config.json"], root,
                                   timeout_s=timeout_s)
        text = read_planted_text(root, f"{DRIVER_DIR}/result.json", RESULT_CAP)  # no link followed, capped
        try:
            data = json.loads(text) if text else {}
            data = data if isinstance(data, dict) else {}
        except ValueError as exc:
            data = {"error": f"the search driver's result is unreadable ({exc})"}
        if not data or data.get("error"):
            data["error"] = driver_error(result, data.get("error"))
        return data
    except OSError as exc:
        return {"error": f"the search driver could not be set up: {exc}"}
    finally:
        if poll is not None:
            poll.cancel()
        shutil.rmtree(folder, ignore_errors=True)


async def _poll_progress(root: Path, on_progress: Callable[[int], None]) -> None:
    """Read the driver's progress count every PROGRESS_POLL_S (no link followed, a few bytes); tell changes.
    A backend that copies the workspace back only at the end (a remote Docker engine) shows no count."""
    last = -1
    while True:
        await asyncio.sleep(PROGRESS_POLL_S)
        try:
            text = read_planted_text(root, f"{DRIVER_DIR}/progress", 32).strip()
        except OSError:
            continue
        if text.isdigit() and int(text) != last:
            last = int(text)
            on_progress(last)


async def collect_coverage(sandbox: Sandbox, root: Path, pytest_args: list[str], timeout_s: float,
                           test_timeout_s: float, select: list[str] | None = None) -> dict:
    """{"coverage", "recorder", "outcomes", "files"} of one suite run with per-test coverage contexts (only the
    tests under the node ids `select`, when given); {"error": ...} (and no outcomes) when the driver failed."""
    config = {"mode": "localize", "args": pytest_args, "test_timeout_s": test_timeout_s, "select": select or []}
    return await run_driver(sandbox, root, config, timeout_s)


async def line_recorder(sandbox: Sandbox, root: Path) -> str:
    """What records per-test lines in `sandbox` for the project `root` is a copy of: "coverage.py X", "agentls'
    line tracer; why not coverage.py", or "none: why" (what `agentls sandbox doctor` reports)."""
    data = await run_driver(sandbox, root, {"mode": "recorder"}, timeout_s=60.0)
    return data.get("recorder") or f"none: {data.get('error')}"


async def try_mutants(
    sandbox: Sandbox, root: Path, nodeids: list[str], mutants: list[Mutant], *, mutant_timeout_s: float,
    budget_s: float, max_passing: int, covering: Callable[[Mutant], list[str]] | None = None, hot: bool = False,
    on_progress: Callable[[int], None] | None = None, tests_of: dict[int, dict[str, str]] | None = None,
    reached: Reached | None = None,
) -> tuple[list[tuple[Mutant, str]], str | None]:
    """Each tried mutant with its outcome on `nodeids` (passed/failed/timeout), and why the driver stopped
    ("budget", "enough", or "error: ..." when it tried none: a usage error, a crash; see run_driver).

    With `covering`, each mutant also runs the tests it names for that mutant (after `nodeids`). With `hot`,
    the suite is collected once and each mutant swapped into its live function (driver_swap.py); the mutants
    that cannot be swapped are then tried the slow way, within what is left of the budget. `on_progress(done)`
    hears how many of `mutants` the driver has tried while it runs (run_driver). With `tests_of`, every one of
    `nodeids` runs (a mutant still stops at the first failure of a covering test) and each tried mutant's
    outcome per test goes into it, by the mutant's id: which failing tests it makes pass (driver/partials.py).
    With `reached`, the failing tests' reach without a mutant and after each one goes into it (driver/steps.py).
    """
    if not hot:
        return await _try(sandbox, root, nodeids, mutants, mutant_timeout_s, budget_s, max_passing, covering, False,
                          on_progress, tests_of, reached)
    started = time.monotonic()
    results, stopped = await _try(sandbox, root, nodeids, mutants, mutant_timeout_s, budget_s, max_passing,
                                  covering, True, on_progress, tests_of, reached)
    order = {id(m): n for n, m in enumerate(mutants)}
    cold = [m for m, outcome in results if outcome == "unswappable"]
    done = [(m, outcome) for m, outcome in results if outcome != "unswappable"]
    left = budget_s - (time.monotonic() - started)
    passing = [order[id(m)] for m, outcome in done if outcome == "passed"]
    wanted = max_passing - len(passing)
    if len(passing) >= max_passing:  # the cold ones ranked before the first hot pass still come first: a
        # candidate that changes a `def` line (a default) must not lose to a later one for being slower to try
        cold, wanted = [m for m in cold if order[id(m)] < min(passing)], max_passing
    if cold and left > 0 and wanted > 0:
        more, stopped_cold = await _try(sandbox, root, nodeids, cold, mutant_timeout_s, left, wanted, covering, False,
                                        tests_of=tests_of, reached=reached)
        done += more
        if stopped != "enough":
            stopped = stopped_cold
        if len(more) < len(cold) and stopped is None:
            stopped = stopped_cold or "budget"
    return sorted(done, key=lambda result: order[id(result[0])]), stopped


async def _try(
    sandbox: Sandbox, root: Path, nodeids: list[str], mutants: list[Mutant], mutant_timeout_s: float,
    budget_s: float, max_passing: int, covering: Callable[[Mutant], list[str]] | None, hot: bool,
    on_progress: Callable[[int], None] | None = None, tests_of: dict[int, dict[str, str]] | None = None,
    reached: Reached | None = None,
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
              "timeout_s": mutant_timeout_s, "budget_s": budget_s, "max_passing": max_passing, "mutants": entries,
              "each_failing": tests_of is not None, "reach": reached is not None}
    # The driver keeps its own budget; the sandbox bound only catches a driver that stops answering.
    data = await run_driver(sandbox, root, config, timeout_s=budget_s + 2 * mutant_timeout_s + 30,
                            on_progress=on_progress)
    if data.get("error"):
        return [], f"error: {data['error']}"
    if tests_of is not None:
        tests_of.update((id(mutants[r["id"]]), r.get("tests") or {}) for r in data["results"])
    if reached is not None:
        reached.baseline = _reaches((data.get("baseline") or {}).get("reach")) or reached.baseline
        reached.of.update((id(mutants[r["id"]]), _reaches(r.get("reach"))) for r in data["results"])
    return [(mutants[r["id"]], r["outcome"]) for r in data["results"]], data.get("stopped")
