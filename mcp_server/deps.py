"""What the tools and resources share: the server's own roots and the projects its clients named."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path


@dataclass
class Deps:
    """`roots`: where a client without MCP roots may point (`--root`); `projects`: those named so far (the runs
    resources list their journals)."""

    roots: list[Path]
    projects: set[Path] = field(default_factory=set)
