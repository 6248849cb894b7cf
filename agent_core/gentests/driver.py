"""Runs the in-sandbox pytest driver (driver_script.py) and reads its JSON result.

One sandboxed process per call runs pytest `repeat` times; the first run can
be measured by coverage.py with per-test contexts. Results are parsed into
per-test outcomes and `TestFailure`s (through the shared JUnit parser).
"""

from __future__ import annotations

import json
import shutil
from dataclasses import dataclass, field
from pathlib import Path

from agent_core.models import TestFailure
from agent_core.sandbox.base import Sandbox
from agent_core.testing.junit import parse_junit
from agent_core.workspace.hostread import fresh_dir, read_planted_text

DRIVER_DIR = ".agentls/gentests"
_SCRIPT = Path(__file__).with_name("driver_script.py")
RESULT_CAP = 64 * 1024 * 1024  # the driver's result, read at most this far


@dataclass
class CoverageData:
    statements: list[int]
    contexts: dict[str, dict[str, list]]  # context -> {"lines": [...], "arcs": [[a, b], ...]}

    def covered_lines(self, contexts: list[str] | None = None) -> set[int]:
        chosen = self.contexts if contexts is None else {c: self.contexts[c] for c in contexts if c in self.contexts}
        return {line for data in chosen.values() for line in data["lines"]} & set(self.statements)

    def percent(self) -> float:
        if not self.statements:
            return 0.0
        return round(100.0 * len(self.covered_lines()) / len(self.statements), 2)

    def contribution(self, context: str) -> set[tuple]:
        data = self.contexts.get(context, {"lines": [], "arcs": []})
        return {("l", line) for line in data["lines"]} | {("a", a, b) for a, b in data["arcs"]}


@dataclass
class PytestRun:
    exit_code: int
    outcomes: dict[str, str]  # nodeid -> passed / failed / error / skipped
    collect_errors: dict[str, str]  # file nodeid -> error text
    last_lines: dict[str, int]  # nodeid -> line where the target file last returned
    failures: list[TestFailure] = field(default_factory=list)
    coverage: CoverageData | None = None


@dataclass
class DriverResult:
    runs: list[PytestRun]
    ok: bool
    output: str = ""
    html_dir: Path | None = None  # coverage.py's HTML report, when asked for and written


async def run_driver(
    sandbox: Sandbox,
    root: Path,
    args: list[str],
    target: str,
    *,
    repeat: int = 1,
    coverage: bool = False,
    timeout_s: float = 300.0,
    html: str | None = None,
) -> DriverResult:
    """Run pytest on `args` (paths / node ids relative to root) in the sandbox.

    With `coverage` and `html` (a folder name), the measured run also writes
    coverage.py's HTML report (per line, with the tests that ran each line).
    """
    folder = fresh_dir(root, DRIVER_DIR)  # never through a link a run planted (workspace/hostread.py)
    shutil.copyfile(_SCRIPT, folder / "driver.py")
    out = folder / "result.json"
    out.unlink(missing_ok=True)
    config = {
        "args": args,
        "repeat": repeat,
        "coverage": coverage,
        "target": target,
        "out": f"{DRIVER_DIR}/result.json",
        **({"html": html} if html else {}),
    }
    if html:
        shutil.rmtree(folder / html, ignore_errors=True)
    (folder / "config.json").write_text(json.dumps(config))
    result = await sandbox.run(
        [sandbox.python, f"{DRIVER_DIR}/driver.py", f"{DRIVER_DIR}/config.json"], root, timeout_s=timeout_s
    )
    output = (result.stdout + result.stderr)[-4000:]
    text = read_planted_text(root, f"{DRIVER_DIR}/result.json", RESULT_CAP)  # no link followed, capped
    try:
        data = json.loads(text) if text else None
    except ValueError:
        data = None
    if not isinstance(data, dict) or not isinstance(data.get("runs"), list):
        return DriverResult(runs=[], ok=False, output=output or f"driver exited with {result.exit_code}")
    runs = []
    for raw in data["runs"]:
        failures = parse_junit(raw["junit"], root).failures if raw.get("junit") else []
        cov = raw.get("coverage")
        runs.append(
            PytestRun(
                exit_code=raw["exit_code"],
                outcomes=raw["outcomes"],
                collect_errors=raw["collect_errors"],
                last_lines={k: int(v) for k, v in raw["last_lines"].items()},
                failures=failures,
                coverage=CoverageData(cov["statements"], cov["contexts"]) if cov else None,
            )
        )
    report = folder / html if html else None
    return DriverResult(
        runs=runs,
        ok=True,
        output=output,
        html_dir=report if report is not None and (report / "index.html").is_file() else None,
    )
