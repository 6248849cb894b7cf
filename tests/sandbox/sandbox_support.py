"""Helpers of the sandbox tests: real backends by name, and processes found by a token."""

from __future__ import annotations

from pathlib import Path

from agent_core.sandbox.bubblewrap import BubblewrapSandbox
from agent_core.sandbox.process import ProcessSandbox
from agent_core.settings import SandboxSettings

BACKENDS = {"bubblewrap": BubblewrapSandbox, "process": ProcessSandbox}


def make_backend(name: str, **limits: object) -> BubblewrapSandbox | ProcessSandbox:
    settings = SandboxSettings(**{"timeout_s": 30.0, **limits})
    return BACKENDS[name](settings)


def processes_with(token: str) -> list[int]:
    """Pids whose command line contains `token`."""
    found = []
    for entry in Path("/proc").iterdir():
        if entry.name.isdigit():
            try:
                if token.encode() in (entry / "cmdline").read_bytes():
                    found.append(int(entry.name))
            except OSError:
                continue
    return found
