"""Tools a project would have on its PATH (uv, tox, pytest with xdist), put inside a test workspace.

The sandbox's PATH holds the system directories only, so a test that runs
`uv run ...` or `tox ...` puts the tool in the workspace: uv's static binary,
or pure-Python distributions copied from our environment behind a launcher
script that puts them on PYTHONPATH (ahead of what the runner sets).
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

from agent_core.sandbox.runtime import sandbox_distributions

LAUNCHER = '#!/bin/sh\nPYTHONPATH="$(dirname "$0")/site${{PYTHONPATH:+:$PYTHONPATH}}" exec python3 -m {module} "$@"\n'


def install_uv(ws: Path) -> None:
    uv = shutil.which("uv") or str(Path(sys.executable).parent / "uv")
    (ws / "tools").mkdir(exist_ok=True)
    shutil.copy2(uv, ws / "tools" / "uv")


def install_python_tool(ws: Path, distribution: str, name: str, module: str) -> None:
    """Copy `distribution` and what it requires to ws/tools/site; ws/tools/<name> runs `python3 -m module`."""
    site = ws / "tools" / "site"
    for dist in sandbox_distributions((distribution,)):
        root = Path(str(dist.locate_file(""))).resolve()
        for item in dist.files or []:
            src = Path(str(dist.locate_file(item)))
            if "__pycache__" in item.parts or item.parts[0] == ".." or not src.is_file():
                continue
            target = site / src.resolve().relative_to(root)
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, target)
    launcher = ws / "tools" / name
    launcher.write_text(LAUNCHER.format(module=module))
    launcher.chmod(0o755)


def install_tox(ws: Path) -> None:
    install_python_tool(ws, "tox", "tox", "tox")


def install_xdist(ws: Path) -> None:
    install_python_tool(ws, "pytest-xdist", "pytest", "pytest")
