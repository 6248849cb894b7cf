"""Pieces of bench/soak.py: the workspace, the scripted coder's moods, /proc readings, the tally."""

from __future__ import annotations

import random
import statistics
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Union

from lsprotocol import types as lsp

from testkit.scripted_llm import Fault

CALC = "def add(a, b):\n    return a + c\n\n\ndef mul(a, b):\n    return a * b\n"
FILES = ["calc.py", "shapes.py", "words.py"]
PLAN = {
    "approach": "Fix add.",
    "subtasks": [{"id": "t1", "description": "make add add in calc.py", "files": ["calc.py"]}],
}
FIX = {
    "edits": [{"path": "calc.py", "search": "    return a + c\n", "replace": "    return a + b\n"}],
    "explanation": "add must add",
}


def make_workspace(root: Path) -> Path:
    (root / "tests").mkdir(parents=True)
    (root / "calc.py").write_text(CALC)
    (root / "shapes.py").write_text("def area(w, h):\n    return w * h\n")
    (root / "words.py").write_text("def shout(s):\n    return s.upper()\n")
    (root / "tests" / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(1, 2) == 3\n"
    )
    (root / "pyproject.toml").write_text('[tool.pytest.ini_options]\npythonpath = ["."]\n')
    return root


def coder_answer(rng: random.Random) -> Any:
    """The fix, streamed slowly, or a stall, a dropped stream or a hang (runs stay in flight)."""
    roll = rng.random()
    if roll < 0.4:
        return Fault.slow(0.01, FIX)
    if roll < 0.6:
        return Fault.stall(60, after=3, then=FIX)
    if roll < 0.75:
        return Fault.drop(after=3, then=FIX)
    return Fault.hang(20, then=FIX)


def fix_code_action_structure(client: Any) -> None:
    """pytest-lsp's converter reads a CodeAction with a command as a Command (MACHINE-NOTES)."""
    converter = client.protocol._converter

    def structure(obj: Any, _type: Any) -> Any:
        target = lsp.Command if isinstance(obj, dict) and isinstance(obj.get("command"), str) else lsp.CodeAction
        return converter.structure(obj, target)

    converter.register_structure_hook(Union[lsp.Command, lsp.CodeAction], structure)  # noqa: UP007 - the typing.Union object cattrs keys on


def rss_kb(pid: int) -> int:
    """Resident memory of `pid` in kB (0 once it is gone)."""
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    except OSError:
        pass
    return 0


def descendants(pid: int) -> list[int]:
    """Pids of every live descendant of `pid` (from /proc)."""
    parents: dict[int, int] = {}
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                parents[int(entry.name)] = int((entry / "stat").read_text().rsplit(")", 1)[1].split()[1])
            except (OSError, ValueError, IndexError):
                continue
    found, frontier = [], [pid]
    while frontier:
        current = frontier.pop()
        children = [child for child, parent in parents.items() if parent == current]
        found.extend(children)
        frontier.extend(children)
    return found


def percentile(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, max(0, round(q * (len(ordered) - 1))))]


def rss_trend(samples: list[tuple[int, int]]) -> dict[str, Any]:
    """RSS (MB) at 25/50/75/100% of the run, and its slope (MB per minute) over each half.

    Bounded memory shows as a second-half slope near zero (a plateau); a leak as a
    second-half slope like the first half's.
    """
    if len(samples) < 4:
        return {}
    end = samples[-1][0]

    def at(fraction: float) -> float:
        seconds, kb = min(samples, key=lambda s: abs(s[0] - fraction * end))
        return round(kb / 1024, 1)

    def slope(part: list[tuple[int, int]]) -> float:
        if len(part) < 2:
            return 0.0
        fit = statistics.linear_regression([s for s, _ in part], [kb for _, kb in part])
        return round(fit.slope * 60 / 1024, 2)

    return {
        "mb_at": {f"{q}%": at(q / 100) for q in (25, 50, 75, 100)},
        "slope_mb_per_min": {
            "first_half": slope([x for x in samples if x[0] <= end / 2]),
            "second_half": slope([x for x in samples if x[0] >= end / 2]),
        },
    }


@dataclass
class Tally:
    """Every request the soak client sent, and what became of it."""

    sent: dict[str, int] = field(default_factory=dict)
    latency_ms: dict[str, list[float]] = field(default_factory=dict)
    errors: list[str] = field(default_factory=list)
    unanswered: list[str] = field(default_factory=list)
    rss: list[tuple[int, int]] = field(default_factory=list)  # (seconds in, kB)
    runs_started: int = 0
    runs_refused: int = 0
    runs_cancelled: int = 0
    llm_requests: int = 0

    def report(self, minutes: float, leftover_processes: list[int], leftover_files: list[str]) -> dict[str, Any]:
        every = [ms for values in self.latency_ms.values() for ms in values]
        warm = [kb for seconds, kb in self.rss if seconds >= 60] or [kb for _, kb in self.rss]
        return {
            "minutes": minutes,
            "requests_sent": sum(self.sent.values()),
            "requests_answered": len(every),
            "error_replies": len(self.errors),
            "error_examples": sorted(set(self.errors))[:5],
            "unanswered": len(self.unanswered),
            "latency_ms": {
                "all": {"p50": round(statistics.median(every), 2), "p99": round(percentile(every, 0.99), 2)}
                if every
                else {},
                **{
                    m: {"n": len(v), "p50": round(statistics.median(v), 2), "p99": round(percentile(v, 0.99), 2)}
                    for m, v in sorted(self.latency_ms.items())
                },
            },
            "runs": {"started": self.runs_started, "refused": self.runs_refused, "cancelled": self.runs_cancelled},
            "model_requests": self.llm_requests,
            "server_rss_kb": {
                "after_warmup": warm[0] if warm else 0,
                "last": warm[-1] if warm else 0,
                "max": max(warm) if warm else 0,
                **rss_trend(self.rss),
                "samples": self.rss,
            },
            "leftover_processes": leftover_processes,
            "leftover_tmp_files": leftover_files,
        }
