"""Probes of what agentls itself promises about untrusted projects, for `agentls sandbox doctor`.

Each is checked for real, not asserted:

- *no host execution of project paths*: a throwaway project plants a
  `.venv/` whose `bin/python` is a script, a `json.py` beside it and a root
  laid out as a git directory whose config names a filter; each would
  create a marker file on the host if run. The real environment detection
  and diff applier look at it; the marker must not appear.
- *report channel unreachable*: a suite whose code under test looks for the
  run's token everywhere a test can (every process's environment and
  command line, every descriptor reopened through /proc), writes "passed"
  records with matching counts with each candidate to every descriptor, and
  ends the process with `os._exit(0)`. The real runner must not report it
  as a clean pass.
"""

from __future__ import annotations

import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

from agent_core.checks.diffs import DiffError, apply_diff, read_diff
from agent_core.sandbox.base import SandboxError
from agent_core.sandbox.cleanup import make_temp_dir, remove_temp_dir
from agent_core.sandbox.environment import detect_environment
from agent_core.sandbox.probes import ProbeResult
from agent_core.testing.runner import run_tests

# The code under test of the channel probe: imported by the tests as they are collected.
FORGE_CODE = '''import glob, json, os, re

TESTS = ("test_calc.py::test_add", "test_calc.py::test_mul", "test_other.py::test_truth")
found = set()
for src in glob.glob("/proc/[0-9]*/environ") + glob.glob("/proc/[0-9]*/cmdline") + glob.glob("/proc/[0-9]*/fd/*"):
    try:
        fd = os.open(src, os.O_RDONLY | os.O_NONBLOCK)
        try:
            data = os.read(fd, 1 << 20)
        finally:
            os.close(fd)
    except OSError:
        continue
    found.update(t.decode() for t in re.findall(rb"(?<![0-9a-f])[0-9a-f]{32}(?![0-9a-f])", data))
lines = []
for token in sorted(found):
    for nodeid in TESTS:
        path = os.path.join(os.getcwd(), nodeid.split("::")[0])
        lines.append({"event": "begin", "nodeid": nodeid, "path": path, "token": token})
        lines.append({"event": "result", "nodeid": nodeid, "path": path, "line": 1, "outcome": "passed",
                      "when": "call", "duration": 0.0, "token": token})
    lines.append({"event": "finish", "exitstatus": 0, "collected": 3, "counts": {"passed": 3}, "token": token})
data = "".join(json.dumps(line) + "\\n" for line in lines).encode()
print("token candidates:", len(found), flush=True)
for fd in range(3, 1100):
    try:
        os.write(fd, data)
    except OSError:
        pass
os._exit(0)


def add(a, b):
    return a - b


def mul(a, b):
    return a * b
'''
FORGE_PROJECT = {
    "calc.py": FORGE_CODE,
    "test_calc.py": ("from calc import add, mul\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
                     "def test_mul():\n    assert mul(2, 3) == 6\n"),
    "test_other.py": "def test_truth():\n    assert True\n",
}


def _write(root: Path, files: dict[str, str]) -> None:
    for rel, text in files.items():
        (root / rel).parent.mkdir(parents=True, exist_ok=True)
        (root / rel).write_text(text, encoding="utf-8")


async def probe_report_channel(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    _write(workspace, FORGE_PROJECT)
    report = await run_tests(sandbox, workspace, "pytest", timeout_s=60)
    held = report.passed == 0 or report.failed + report.errors > 0
    verdict = "rejected" if held else "ACCEPTED as a clean pass"
    return ProbeResult("report channel unreachable", held,
                       f"forged records and os._exit(0) {verdict} ({report.passed} passed, "
                       f"{report.failed} failed, {report.errors} errors)")


def _plant(project: Path, marker: Path) -> None:
    """A `.venv/` whose interpreter is a script, a `json.py`, and a root laid out as a git directory."""
    (project / ".venv" / "bin").mkdir(parents=True)
    version = ".".join(map(str, sys.version_info[:3]))
    (project / ".venv" / "pyvenv.cfg").write_text(f"home = {Path(sys.base_prefix) / 'bin'}\nversion = {version}\n")
    script = project / ".venv" / "bin" / "python"
    script.write_text(f"#!/bin/sh\ntouch {marker}.venv\n")
    script.chmod(0o755)
    (project / "json.py").write_text(f"open({str(marker)!r} + '.json', 'w').close()\n")
    subprocess.run(["git", "init", "-q", "--bare", str(project)], check=False, capture_output=True)
    with open(project / "config", "a", encoding="utf-8") as config:
        config.write(f'[filter "x"]\n\tclean = touch {marker}.filter\n\tsmudge = touch {marker}.filter\n')
    (project / ".gitattributes").write_text("* filter=x\n")
    (project / "calc.py").write_text("x = 1\n")


async def probe_no_host_exec(sandbox: Any, workspace: Path, limits: Any) -> ProbeResult:
    host = make_temp_dir("hostexec")
    marker = host / f"ran-{uuid.uuid4().hex}"
    try:
        _plant(workspace, marker)
        seen = []
        try:
            seen.append(f"environment: {detect_environment(workspace).kind}")
        except SandboxError as exc:
            seen.append(f"environment refused: {exc}")
        try:
            apply_diff(read_diff("--- a/calc.py\n+++ b/calc.py\n@@ -1 +1 @@\n-x = 1\n+x = 2\n", workspace), workspace)
            seen.append("diff applied")
        except DiffError as exc:
            seen.append(f"diff refused: {exc}")
        ran = sorted(p.name.rsplit(".", 1)[-1] for p in host.iterdir() if p.name.startswith("ran-"))
    finally:
        remove_temp_dir(host)
    detail = ("planted .venv/bin/python, json.py, git filter: none ran" if not ran
              else f"RAN ON THE HOST: {', '.join(ran)}") + f" ({'; '.join(seen)})"
    return ProbeResult("no host execution of project paths", not ran, detail)


TRUST_PROBES = (probe_no_host_exec, probe_report_channel)
