"""What each MCP tool costs in wall-clock time: `agentls mcp` over stdio, driven by the SDK's client.

    python -m bench.mcp_costs PROJECT [--bug FILE ORIGINAL BUGGY] [--repeat 3] [--test-cmd CMD]

PROJECT is copied to a temp dir (never written). With --bug, the line
ORIGINAL of FILE is replaced by BUGGY in the copy first, so localize and
quick_fix have a failure to work on, and verify_patch is given the diff that
restores ORIGINAL. Prints one line per tool: median, min and max seconds over
--repeat calls, and the load average before and after (the figures in
docs/mcp.md). fix and gen_tests are not timed here: their cost is the
model's (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import difflib
import os
import shutil
import statistics
import sys
import tempfile
import time
from pathlib import Path

import anyio
from mcp import Client, StdioServerParameters

AGENTLS = Path(sys.executable).with_name("agentls")


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def _diff(rel: str, before: str, after: str) -> str:
    lines = difflib.unified_diff(before.splitlines(True), after.splitlines(True), f"a/{rel}", f"b/{rel}")
    return "".join(lines)


def _prepare(args: argparse.Namespace, work: Path) -> tuple[Path, str | None, str]:
    project = work / Path(args.project).name
    shutil.copytree(args.project, project, symlinks=True)
    if not args.bug:
        return project, None, ""
    rel, original, buggy = args.bug
    text = (project / rel).read_text()
    assert text.count(original) == 1, f"{original!r} is not once in {rel}"
    (project / rel).write_text(text.replace(original, buggy))
    return project, _diff(rel, text.replace(original, buggy), text), _diff(rel, text, text.replace(original, buggy))


async def _time(client: Client, name: str, arguments: dict, repeat: int) -> tuple[list[float], str]:
    times, text = [], ""
    for _ in range(repeat):
        started = time.monotonic()
        result = await client.call_tool(name, arguments)
        times.append(time.monotonic() - started)
        text = result.content[0].text if result.content else ""
    return times, text


async def main(args: argparse.Namespace) -> None:
    work = Path(tempfile.mkdtemp(prefix="agentls-mcp-bench-"))
    try:
        project, fix_diff, _ = _prepare(args, work)
        base = {"project": str(project), **({"test_cmd": args.test_cmd} if args.test_cmd else {})}
        calls = [("run_tests", base)]
        if fix_diff:
            calls += [("verify_patch", {**base, "diff": fix_diff}), ("localize", base), ("quick_fix", base)]
        test_file = next((p for p in sorted(project.rglob("test_*.py"))), None)
        if test_file is not None:
            rel = test_file.relative_to(project).as_posix()
            refused = _diff(rel, test_file.read_text(), test_file.read_text() + "\n# edited\n")
            calls.append(("verify_patch (refused)", {**base, "diff": refused}))
        print(f"load before: {_load()}  ({os.cpu_count()} cores)")
        started = time.monotonic()
        params = StdioServerParameters(command=str(AGENTLS), args=["mcp", "--root", str(work)],
                                       env={**os.environ, "AGENTLS_SEARCH": "1"})
        async with Client(params, read_timeout_seconds=1800) as client:
            print(f"{'start + initialize':<24} {time.monotonic() - started:7.2f} s")
            for label, arguments in calls:
                times, text = await _time(client, label.split()[0], arguments, args.repeat)
                print(f"{label:<24} {statistics.median(times):7.2f} s  (min {min(times):.2f}, max {max(times):.2f})"
                      f"  {text[:90]}")
        print(f"load after: {_load()}")
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("project")
    parser.add_argument("--bug", nargs=3, metavar=("FILE", "ORIGINAL", "BUGGY"))
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--test-cmd", dest="test_cmd")
    anyio.run(main, parser.parse_args())
