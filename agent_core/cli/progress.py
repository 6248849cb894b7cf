"""Run progress on stderr: a one-line bar on a terminal, plain lines otherwise.

Used by `agentls fix` (and any subcommand that runs the engine). It is the
CLI's RunHooks: it shows events and answers the safety gate from the flag.
"""

from __future__ import annotations

import shutil
import sys
from typing import TextIO

from agent_core.events import MessageEvent, PhaseEvent, RunEvent, SafetyViolation, TestReportEvent


class TerminalHooks:
    """Shows events on `stream`; approves unsafe code only when `allow_unsafe`, non-code files when `allow_non_code`."""

    def __init__(self, stream: TextIO | None = None, allow_unsafe: bool = False, allow_non_code: bool = False) -> None:
        self.stream = stream or sys.stderr
        self.allow_unsafe, self.allow_non_code = allow_unsafe, allow_non_code
        self.tty = self.stream.isatty()
        self._bar_shown = False

    def emit(self, event: RunEvent) -> None:
        if isinstance(event, PhaseEvent):
            self._phase(event)
        elif isinstance(event, TestReportEvent):
            r = event.report
            state = "timed out" if r.timed_out else f"{r.passed} passed, {r.failed} failed, {r.errors} errors"
            self._line(f"tests: {state} ({r.duration_s:.1f}s, {r.backend or 'sandbox'})")
        elif isinstance(event, MessageEvent):
            self._line(f"agentls: {event.level}: {event.text}")

    async def approve(self, violations: list[SafetyViolation]) -> bool:
        for v in violations:
            self._line(f"safety: {v.file}:{v.line}: {v.message} [{v.rule}]")
        if violations and all(v.rule == "non-code" for v in violations):  # the gate asks these on their own
            if not self.allow_non_code:
                self._line("safety: left out (rerun with --allow-non-code to let the fix change such a file)")
            return self.allow_non_code
        if not self.allow_unsafe:
            self._line("safety: rejected (rerun with --allow-unsafe to test and apply such code)")
        return self.allow_unsafe

    def close(self) -> None:
        if self._bar_shown:
            self.stream.write("\n")
            self.stream.flush()
            self._bar_shown = False

    def _phase(self, event: PhaseEvent) -> None:
        if not self.tty:
            self._line(f"[{event.percentage:3d}%] {event.message}")
            return
        width = max(10, min(30, shutil.get_terminal_size((80, 20)).columns - 50))
        filled = width * event.percentage // 100
        bar = "#" * filled + "-" * (width - filled)
        self.stream.write(f"\r[{bar}] {event.percentage:3d}% {event.message[:40]:<40}")
        self.stream.flush()
        self._bar_shown = True

    def _line(self, text: str) -> None:
        self.close()
        self.stream.write(text + "\n")
        self.stream.flush()
