"""The download bar: off a terminal (a log), a plain line every tenth of the way and no escape codes."""

from __future__ import annotations

import io

from agent_core.local_model.progress import ProgressBar


def test_off_a_terminal_a_line_per_tenth_without_escape_codes() -> None:
    log = io.StringIO()
    bar = ProgressBar("downloading [m] model", 40, unit="parts", unit_scale=1, stream=log)
    for _ in range(40):
        bar.advance(1)
    bar.advance(5)  # past the total: held at it
    bar.close()

    lines = log.getvalue().splitlines()
    assert len(lines) == 11 and "\x1b" not in log.getvalue()
    assert lines[0] == "downloading [m] model   0% 0/40 parts"
    assert lines[-1] == "downloading [m] model 100% 40/40 parts"
