"""How the CLI looks on a terminal: whether to colour, the coloured diff, styled stderr lines (rich).

Colour follows the conventions users set once for every tool: `NO_COLOR`
(no-color.org) turns it off, `FORCE_COLOR` turns it on even into a pipe,
otherwise only a terminal gets it (and not `TERM=dumb`). `--json` output is
never coloured. Without colour, text is written as is, byte for byte, so a
diff piped to `patch` or a file is exactly the diff.
"""

from __future__ import annotations

import os
from collections.abc import Mapping
from typing import TextIO

from rich.console import Console
from rich.text import Text

DIFF_STYLES = (("+++", "bold"), ("---", "bold"), ("@@", "cyan"), ("+", "green"), ("-", "red"))
LEVEL_STYLES = {"error": "bold red", "warning": "yellow", "ok": "green", "dim": "dim"}


def is_terminal(stream: TextIO) -> bool:
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # a closed or a fake stream
        return False


def wants_color(stream: TextIO, plain: bool = False, env: Mapping[str, str] | None = None) -> bool:
    """Colour for `stream`: never when `plain` (--json) or NO_COLOR is set; always with FORCE_COLOR; else a tty."""
    env = os.environ if env is None else env
    if plain or env.get("NO_COLOR"):
        return False
    if env.get("FORCE_COLOR"):
        return True
    return is_terminal(stream) and env.get("TERM") != "dumb"


def console_for(stream: TextIO, color: bool, terminal: bool | None = None) -> Console:
    """A rich console on `stream` that colours only when `color`, never wraps and reads no markup; `terminal`
    (default: `color`) lets it move the cursor, for a live bar without colour (NO_COLOR on a tty)."""
    return Console(file=stream, force_terminal=color if terminal is None else terminal, no_color=not color,
                   color_system="standard" if color else None, highlight=False, soft_wrap=True, emoji=False,
                   markup=False)


def write_diff(diff: str, stream: TextIO, color: bool) -> None:
    """A unified diff: headers bold, hunks cyan, additions green, removals red; as is without colour."""
    if not color:
        stream.write(diff)
        return
    console = console_for(stream, color)
    for line in diff.splitlines():
        style = next((s for prefix, s in DIFF_STYLES if line.startswith(prefix)), "")
        console.print(Text(line, style=style))


def write_line(stream: TextIO, text: str, level: str = "", color: bool = False) -> None:
    """One stderr line, styled by `level` (error, warning, ok, dim) when `color`."""
    if not color or level not in LEVEL_STYLES:
        stream.write(text + "\n")
        stream.flush()
        return
    console_for(stream, color).print(Text(text, style=LEVEL_STYLES[level]))
