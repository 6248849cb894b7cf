"""A plain progress bar on stderr for long model downloads and reassembly.

On a terminal it redraws one line; elsewhere (logs, CI) it prints a line
only every tenth of the way so a log stays readable.
"""

from __future__ import annotations

import sys
from typing import TextIO

_WIDTH = 30


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
        self.label = label
        self.total = max(total, 1)
        self.done = 0
        self.unit = unit
        self.unit_scale = unit_scale
        self.stream = stream if stream is not None else sys.stderr
        self._tty = bool(getattr(self.stream, "isatty", lambda: False)())
        self._last_tenth = -1

    def set_label(self, label: str) -> None:
        self.label = label
        self._draw()

    def advance(self, amount: int) -> None:
        self.done = min(self.done + amount, self.total)
        self._draw()

    def _line(self) -> str:
        frac = self.done / self.total
        filled = int(frac * _WIDTH)
        bar = "#" * filled + "-" * (_WIDTH - filled)
        shown = f"{self.done * self.unit_scale:.0f}/{self.total * self.unit_scale:.0f} {self.unit}"
        return f"{self.label} [{bar}] {frac * 100:3.0f}% {shown}"

    def _draw(self) -> None:
        if self._tty:
            self.stream.write("\r\x1b[K" + self._line())
            self.stream.flush()
            return
        tenth = int(10 * self.done / self.total)
        if tenth != self._last_tenth:
            self._last_tenth = tenth
            self.stream.write(self._line() + "\n")
            self.stream.flush()

    def close(self) -> None:
        if self._tty:
            self.stream.write("\n")
            self.stream.flush()
