"""Does the sandbox change outcomes? Run a project's suite on the host and in the sandbox, and compare.

For `agentls sandbox doctor --project PATH`. Both runs use a shadow copy of
the project (the project itself is never written) and pytest's JUnit XML; the
host run uses the interpreter detected for the project (environment.py; its
own pytest, else agentls' sandbox site), the sandbox run the sandbox's. The
outcome of each test (passed, failed, error, skipped) is read from both
reports and the tests whose outcome differs are listed. The host run is the reference: it is what the user sees.
"""

from __future__ import annotations

import asyncio
import os
import subprocess
import xml.etree.ElementTree as ET
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from agent_core.sandbox.base import sandbox_env
from agent_core.sandbox.environment import detect_environment
from agent_core.sandbox.envview import plan_view
from agent_core.workspace.shadow import ShadowWorkspace

PYTEST_ARGS = ["-m", "pytest", "-q", "-p", "no:cacheprovider", "-o", "junit_family=xunit1"]


@dataclass
class Comparison:
    """Per-test outcomes on both sides and the tests whose outcome differs."""

    host: dict[str, str]
    sandbox: dict[str, str]
    host_exit: int | None
    sandbox_exit: int | None
    differences: list[tuple[str, str, str]] = field(default_factory=list)  # (test, host, sandbox)
    sandbox_tail: str = ""


def outcomes(junit_xml: str) -> dict[str, str]:
    """test id (`classname::name`) -> passed/failed/error/skipped, from a JUnit XML report."""
    found: dict[str, str] = {}
    for case in ET.fromstring(junit_xml).iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        tags = {child.tag for child in case}
        outcome = ("error" if "error" in tags else "failed" if "failure" in tags
                   else "skipped" if "skipped" in tags else "passed")
        if found.get(test) in (None, "passed"):  # a teardown error after a pass counts
            found[test] = outcome
    return found


def _read(path: Path) -> dict[str, str]:
    try:
        return outcomes(path.read_text(encoding="utf-8", errors="replace"))
    except (OSError, ET.ParseError):
        return {}


def _host_run(python: str, root: Path, report: Path, pythonpath: str | None, timeout_s: float) -> int | None:
    env = sandbox_env(os.environ)  # the user's variables, minus anything that looks secret
    env["PATH"] = f"{Path(python).parent}:{os.environ.get('PATH', '/usr/bin:/bin')}"
    if pythonpath:
        env["PYTHONPATH"] = pythonpath
    try:
        done = subprocess.run([python, *PYTEST_ARGS, f"--junitxml={report}"], cwd=root, env=env,
                              capture_output=True, text=True, timeout=timeout_s, check=False)
    except subprocess.TimeoutExpired:
        return None
    return done.returncode


def compare_project(sandbox: Any, project: Path, timeout_s: float) -> Comparison:
    """Run the suite of `project` on the host and in `sandbox`; see the module docstring."""
    with ShadowWorkspace(project) as host_copy:
        # the user's own interpreter for the project on the host, whichever backend is compared
        env = sandbox.environment(project) if hasattr(sandbox, "environment") else detect_environment(project)
        python = str(env.python)
        site = ":".join(plan_view(env, host_copy.root, project, None).pythonpath)
        host_report = host_copy.root.parent / "host-junit.xml"
        host_exit = _host_run(python, host_copy.root, host_report, site or None, timeout_s)
        host = _read(host_report)
    with ShadowWorkspace(project) as box_copy:
        (box_copy.root / ".agentls").mkdir(exist_ok=True)
        rel = ".agentls/sandbox-junit.xml"
        result = asyncio.run(sandbox.run([sandbox.python, *PYTEST_ARGS, f"--junitxml={rel}"], box_copy.root,
                                         timeout_s=timeout_s))
        boxed = _read(box_copy.root / rel)
    differences = [(test, host.get(test, "absent"), boxed.get(test, "absent"))
                   for test in sorted(set(host) | set(boxed)) if host.get(test) != boxed.get(test)]
    tail = (result.stdout + result.stderr)[-2000:] if differences else ""
    return Comparison(host, boxed, host_exit, result.exit_code, differences, tail)


def format_comparison(comp: Comparison) -> str:
    lines = [f"host:    {_count(comp.host)} (exit {comp.host_exit})",
             f"sandbox: {_count(comp.sandbox)} (exit {comp.sandbox_exit})"]
    if not comp.differences:
        lines.append("no test changes outcome in the sandbox")
        return "\n".join(lines)
    lines.append(f"{len(comp.differences)} tests change outcome in the sandbox:")
    lines += [f"  {test}: host {host}, sandbox {boxed}" for test, host, boxed in comp.differences]
    if comp.sandbox_tail:
        lines += ["--- sandbox output (tail) ---", comp.sandbox_tail]
    return "\n".join(lines)


def _count(found: dict[str, str]) -> str:
    if not found:
        return "no tests reported"
    kinds = ("passed", "failed", "error", "skipped")
    return ", ".join(f"{sum(1 for v in found.values() if v == kind)} {kind}" for kind in kinds)
