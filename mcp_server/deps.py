"""What the tools and resources share: the server's roots, the projects its clients named, the run queue."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from agent_core.sandbox.run_slots import RunSlots


@dataclass
class Deps:
    """`roots`: where a client without MCP roots may point (`--root`); `bounded`: whether `roots` also bound the
    roots a client declares (`--root` given, or HTTP); `projects`: those named so far (the runs resources list
    their journals); `slots`: the run queue, at most `max_concurrent_runs` engine calls at once."""

    roots: list[Path]
    bounded: bool = True
    projects: set[Path] = field(default_factory=set)
    slots: RunSlots = field(default_factory=RunSlots)
