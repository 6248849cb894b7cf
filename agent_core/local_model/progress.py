"""The progress of long model downloads and reassembly on stderr, drawn by rich.progress.

On a terminal rich redraws one live line (bar, percentage, the figure in its
unit); elsewhere (logs, CI) a plain line is printed only every tenth of the
way so that a log stays readable, and rich prints the final state at the end.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.console import Console
from rich.progress import BarColumn, Progress, TaskProgressColumn, TextColumn


class ProgressBar:
    """`advance(n)` towards `total` units; `unit_scale` turns units into the shown figure."""

    def __init__(
        self,
        label: str,
        total: int,
        *,
        unit: str = "MB",
        unit_scale: float = 1 / 1_000_000,
        stream: TextIO | None = None,
    ) -> None:
        self.label, self.total, self.done = label, max(total, 1), 0
        self.unit, self.unit_scale = unit, unit_scale
        console = Console(file=stream if stream is not None else sys.stderr, highlight=False)
        self._live = console.is_terminal
        self._last_tenth = -1
        columns = (TextColumn("{task.description}", markup=False), BarColumn(), TaskProgressColumn(),
                   TextColumn("{task.fields[shown]}", markup=False))
        self._progress = Progress(*columns, console=console, disable=not self._live)
        self._task = self._progress.add_task(label, total=self.total, shown=self._shown())
        if self._live:
            self._progress.start()
        else:
            self._log_line()

    def _shown(self) -> str:
        return f"{self.done * self.unit_scale:.0f}/{self.total * self.unit_scale:.0f} {self.unit}"

    def set_label(self, label: str) -> None:
        self.label = label
        self._progress.update(self._task, description=label)

    def advance(self, amount: int) -> None:
        self.done = min(self.done + amount, self.total)
        self._progress.update(self._task, completed=self.done, shown=self._shown())
        if not self._live:
            self._log_line()

    def _log_line(self) -> None:
        tenth = int(10 * self.done / self.total)
        if tenth != self._last_tenth:
            self._last_tenth = tenth
            self._progress.console.print(f"{self.label} {100 * self.done / self.total:3.0f}% {self._shown()}",
                                         markup=False, soft_wrap=True)

    def close(self) -> None:
        if self._live:
            self._progress.stop()
