"""Run progress on stderr: a live bar on a terminal (rich), plain lines otherwise.

Used by `agentls fix` (and every subcommand that runs the engine). It is the
CLI's RunHooks: it shows events and answers the safety gate from the flag.
On a terminal (and not with --json) the bar shows the phase's message at the
terminal's width, the percentage and the time elapsed, which keeps counting
while a long step (the mutant search, a model call) works; messages print
above it, coloured by level (cli/style.py). Elsewhere each phase is one line
`[ 42%] message`, uncoloured unless FORCE_COLOR asks. Either way the phases
pass through `ForwardProgress` (events.py): the percentage never goes down
and a repeated line is not printed again.
"""

from __future__ import annotations

import sys
from typing import TextIO

from rich.progress import BarColumn, Progress, SpinnerColumn, TaskID, TaskProgressColumn, TextColumn, TimeElapsedColumn
from rich.text import Text

from agent_core.cli.style import LEVEL_STYLES, console_for, is_terminal, wants_color, write_line
from agent_core.events import ForwardProgress, MessageEvent, PhaseEvent, RunEvent, SafetyViolation, TestReportEvent

_LEVELS = {"error": "error", "warning": "warning"}


class TerminalHooks:
    """Shows events on `stream`; approves unsafe code only when `allow_unsafe`, non-code files when `allow_non_code`.

    `plain` (--json) means no live bar and no colour, whatever the stream is."""

    def __init__(self, stream: TextIO | None = None, allow_unsafe: bool = False, allow_non_code: bool = False,
                 plain: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.allow_unsafe, self.allow_non_code = allow_unsafe, allow_non_code
        self.tty = is_terminal(self.stream) and not plain
        self.color = wants_color(self.stream, plain)
        self._progress: Progress | None = None
        self._task: TaskID | None = None
        self._forward = ForwardProgress()

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, PhaseEvent):
            self._phase(event)
        elif isinstance(event, TestReportEvent):
            r = event.report
            state = "timed out" if r.timed_out else f"{r.passed} passed, {r.failed} failed, {r.errors} errors"
            self._line(f"tests: {state} ({r.duration_s:.1f}s, {r.backend or 'sandbox'})", "ok" if r.ok else "")
        elif isinstance(event, MessageEvent):
            self._line(f"agentls: {event.level}: {event.text}", _LEVELS.get(event.level, ""))

    async def approve(self, violations: list[SafetyViolation]) -> bool:
        for v in violations:
            self._line(f"safety: {v.file}:{v.line}: {v.message} [{v.rule}]", "warning")
        if violations and all(v.rule == "non-code" for v in violations):  # the gate asks these on their own
            if not self.allow_non_code:
                self._line("safety: left out (rerun with --allow-non-code to let the fix change such a file)")
            return self.allow_non_code
        if not self.allow_unsafe:
            self._line("safety: rejected (rerun with --allow-unsafe to test and apply such code)", "error")
        return self.allow_unsafe

    def close(self) -> None:
        """Take the live bar down (it is transient: the end message says how the run went)."""
        if self._progress is not None:
            self._progress.stop()
            self._progress = None

    def _phase(self, event: PhaseEvent) -> None:
        step = self._forward.step(event)
        if step is None:
            return
        if not self.tty:
            self._line(f"[{step.percentage:3d}%] {step.message}")
            return
        if self._progress is None:
            self._progress = Progress(
                SpinnerColumn(), TextColumn("{task.description}", markup=False), BarColumn(bar_width=24),
                TaskProgressColumn(), TimeElapsedColumn(), console=console_for(self.stream, self.color, terminal=True),
                transient=True, refresh_per_second=4,
            )
            self._progress.start()
            self._task = self._progress.add_task(step.message, total=100)
        assert self._task is not None
        self._progress.update(self._task, description=step.message, completed=step.percentage)

    def _line(self, text: str, level: str = "") -> None:
        if self._progress is not None:  # above the live bar, which stays at the bottom
            self._progress.console.print(Text(text, style=LEVEL_STYLES.get(level, "") if self.color else ""))
            return
        write_line(self.stream, text, level, self.color)
