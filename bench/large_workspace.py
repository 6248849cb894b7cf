"""A 5,000-file, ~200 MB workspace: time to the first model request, and the shadow copy alone (not a test).

Builds a synthetic project (a package of 40 subpackages of modules, data
files and binary blobs, a `.gitignore`d `artifacts/` tree and `build/` dir,
`*.log` files, one failing test), then, for the code under test and for a
baseline revision exported with `git archive` (default: the merge base of
HEAD and `main`), alternately:

1. runs `agentls fix` on it as a subprocess against the scripted
   OpenAI-compatible server (testkit/scripted_llm.py) and takes the time from
   starting the process to the first chat request reaching the server (the
   server answers that request with HTTP 400, which ends the run);
2. opens and closes a `ShadowWorkspace` of it in a fresh interpreter and
   takes the time of the copy alone (open, then close, reported apart).

Medians of `--runs` runs each (three shadow copies per run), printed side by
side; the shadow copy's CPU time (this process, kernel copy included) moves
less with other load on the machine than its wall time. Needs bubblewrap (the
default sandbox) for the baseline test run, as `agentls fix` does.

Usage: .venv/bin/python -m bench.large_workspace [--runs 5] [--files 5000] [--mb 200] [--baseline-rev REV]
       [--code DIR] [--baseline-code DIR]   (DIR: a tree holding agent_core/, e.g. a `git archive` export)
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from testkit.scripted_llm import Fault, ScriptedLLM

ROOT = Path(__file__).resolve().parents[1]

SUBPACKAGES = 40
GITIGNORE = "\n".join([  # a typical Python project's list (about 60 rules), this project's own at the end
    "__pycache__/", "*.py[cod]", "*$py.class", "*.so", ".Python", "build/", "develop-eggs/", "dist/", "downloads/",
    "eggs/", ".eggs/", "lib64/", "parts/", "sdist/", "var/", "wheels/", "*.egg-info/", ".installed.cfg", "*.egg",
    "MANIFEST", "*.manifest", "*.spec", "pip-log.txt", "pip-delete-this-directory.txt", "htmlcov/", ".tox/", ".nox/",
    ".coverage", ".coverage.*", ".cache", "nosetests.xml", "coverage.xml", "*.cover", ".hypothesis/", ".pytest_cache/",
    "*.mo", "*.pot", "local_settings.py", "db.sqlite3", "instance/", "docs/_build/", "target/", ".ipynb_checkpoints",
    "profile_default/", "__pypackages__/", "celerybeat-schedule", ".env", ".venv", "env/", "venv/", "ENV/",
    ".mypy_cache/", ".dmypy.json", ".pyre/", ".pytype/", "cython_debug/", ".ruff_cache/",
    "# this project", "artifacts/", "*.log", "",
])
BUG = "def total(values):\n    return sum(values) - 1\n"
FAILING_TEST = "from bigproj.core import total\n\n\ndef test_total():\n    assert total([1, 2, 3]) == 6\n"
SHADOW_PROBE = """
import sys, time
from pathlib import Path
from agent_core.workspace.shadow import ShadowWorkspace
shadow = ShadowWorkspace(Path(sys.argv[1]))
started, cpu = time.perf_counter(), time.process_time()
shadow.open()
opened, cpu = time.perf_counter(), time.process_time() - cpu
shadow.close()
print(opened - started, cpu, time.perf_counter() - opened)
"""


def _module(i: int, j: int) -> str:
    funcs = "".join(
        f"def f{k}(x: int) -> int:\n    \"\"\"Step {k} of module {i}.{j}.\"\"\"\n    return x * {k} + {j}\n\n\n"
        for k in range(20)
    )
    return f'"""Module {j} of subpackage {i}."""\n\n{funcs}'


def _write_blob(path: Path, size: int, seed: bytes) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(path.name.encode() + b"\0")
        written = len(path.name) + 1
        while written < size:
            chunk = seed[: size - written]
            handle.write(chunk)
            written += len(chunk)


def build_workspace(root: Path, files: int, megabytes: int) -> dict[str, int]:
    """Write the synthetic project under `root`; return counts (files, bytes, ignored files, ignored bytes)."""
    root.mkdir(parents=True)
    seed = os.urandom(1 << 20)
    (root / ".gitignore").write_text(GITIGNORE)
    (root / "bigproj" / "sub00").mkdir(parents=True)
    (root / "bigproj" / "sub00" / ".gitignore").write_text("# generated here\n_version.py\n")
    (root / "pyproject.toml").write_text('[project]\nname = "bigproj"\nversion = "0"\n\n'
                                         '[tool.pytest.ini_options]\ntestpaths = ["tests"]\n')
    pkg = root / "bigproj"
    (pkg / "__init__.py").write_text("")
    (pkg / "core.py").write_text(BUG)
    tests = root / "tests"
    tests.mkdir()
    (tests / "test_core.py").write_text(FAILING_TEST)
    modules = files * 2 // 5  # 40% Python modules, 40% data files kept, 20% ignored
    for n in range(modules):
        i, j = n % SUBPACKAGES, n // SUBPACKAGES
        sub = pkg / f"sub{i:02d}"
        sub.mkdir(exist_ok=True)
        (sub / "__init__.py").touch()
        (sub / f"mod{j:03d}.py").write_text(_module(i, j))
    for i in range(0, SUBPACKAGES, 8):
        (tests / f"test_sub{i:02d}.py").write_text(
            f"from bigproj.sub{i:02d}.mod000 import f1\n\n\ndef test_f1():\n    assert f1(2) == 2\n")
    existing = sum(1 for p in root.rglob("*") if p.is_file())
    budget = megabytes << 20
    kept_bytes, ignored_bytes = budget * 55 // 100, budget * 40 // 100  # modules and tests make up the rest
    data_files = max(1, (files - existing) * 2 // 3)
    ignored_files = max(1, files - existing - data_files)
    _fill(root / "data", data_files, kept_bytes, seed, blobs=20, names=("table{:04d}.csv", "blob{:02d}.bin"))
    _fill(
        root / "artifacts",
        ignored_files - 60,
        ignored_bytes,
        seed,
        blobs=10,
        names=("out{:04d}.dat", "image{:02d}.bin"),
    )
    for n in range(40):
        _write_blob(root / "build" / "lib" / f"gen{n:02d}.py", 4096, seed)
    for n in range(20):
        _write_blob(root / "logs" / f"run{n:02d}.log", 8192, seed)
    every = [p for p in root.rglob("*") if p.is_file()]
    ignored = [p for p in every if p.relative_to(root).parts[0] in ("artifacts", "build") or p.suffix == ".log"]
    return {
        "files": len(every),
        "bytes": sum(p.stat().st_size for p in every),
        "ignored_files": len(ignored),
        "ignored_bytes": sum(p.stat().st_size for p in ignored),
    }


def _fill(folder: Path, count: int, size: int, seed: bytes, blobs: int, names: tuple[str, str]) -> None:
    """`count` files of about `size` bytes in all: `blobs` big binary files carry 80%, small ones the rest."""
    blobs = min(blobs, count)
    small = count - blobs
    for n in range(blobs):
        _write_blob(folder / names[1].format(n), size * 8 // 10 // blobs, seed)
    for n in range(small):
        _write_blob(folder / f"part{n % 20:02d}" / names[0].format(n), size * 2 // 10 // max(1, small), seed)


def export_revision(rev: str, dest: Path) -> str:
    """The tree of `rev` (its agent_core and lsp_server) unpacked into `dest`; return the short hash."""
    short = subprocess.run(
        ["git", "-C", str(ROOT), "rev-parse", "--short", rev], capture_output=True, text=True, check=True
    ).stdout.strip()
    dest.mkdir(parents=True)
    archive = subprocess.run(
        ["git", "-C", str(ROOT), "archive", rev, "agent_core", "lsp_server"], capture_output=True, check=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", str(dest)], input=archive, check=True)
    return short


def merge_base() -> str:
    return subprocess.run(
        ["git", "-C", str(ROOT), "merge-base", "HEAD", "main"], capture_output=True, text=True, check=True
    ).stdout.strip()


class FirstRequest:
    """Answers every chat request with HTTP 400 and notes when the first one arrived."""

    def __init__(self) -> None:
        self.at: float | None = None
        self.arrived = threading.Event()

    def __call__(self, body: dict[str, Any]) -> Fault:
        if self.at is None:
            self.at = time.perf_counter()
            self.arrived.set()
        return Fault.status(400)


def time_to_first_request(code: Path, workspace: Path, llm: ScriptedLLM) -> float:
    """Seconds from starting `agentls fix` (code from `code`) to its first chat request."""
    probe = FirstRequest()
    llm.default("*", probe)
    env = {**os.environ, "PYTHONPATH": str(code), "AGENTLS_BASE_URL": llm.base_url, "AGENTLS_API_KEY": "bench"}
    started = time.perf_counter()
    proc = subprocess.Popen(
        [sys.executable, "-m", "agent_core", "fix", str(workspace), "--json"],
        env=env,
        cwd=code,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    out, err = proc.communicate(timeout=900)
    if probe.at is None:
        raise RuntimeError(f"agentls fix made no model request (exit {proc.returncode}):\n{out[-2000:]}\n{err[-2000:]}")
    return probe.at - started


def shadow_times(code: Path, workspace: Path) -> tuple[float, float, float]:
    """(open s, open CPU s, close s) of a ShadowWorkspace of `workspace`, code from `code`, in a fresh interpreter."""
    out = subprocess.run(
        [sys.executable, "-c", SHADOW_PROBE, str(workspace)],
        env={**os.environ, "PYTHONPATH": str(code)},
        cwd=code,
        capture_output=True,
        text=True,
        check=True,
    ).stdout.split()
    return float(out[0]), float(out[1]), float(out[2])


def measure(codes: dict[str, Path], workspace: Path, runs: int) -> dict[str, dict[str, list[float]]]:
    """Every figure for every code tree, interleaved run by run (the first round warms caches, not counted)."""
    figures: dict[str, dict[str, list[float]]] = {
        name: {"first": [], "open": [], "cpu": [], "close": []} for name in codes
    }
    with ScriptedLLM() as llm:
        for n in range(runs + 1):
            for name, code in codes.items():
                first = time_to_first_request(code, workspace, llm)
                shadows = [shadow_times(code, workspace) for _ in range(3)]
                if n:
                    figures[name]["first"].append(first)
                    for opened, cpu, closed in shadows:
                        figures[name]["open"].append(opened)
                        figures[name]["cpu"].append(cpu)
                        figures[name]["close"].append(closed)
    return figures


def report(figures: dict[str, dict[str, list[float]]], sizes: dict[str, int], runs: int) -> None:
    print(
        f"workspace: {sizes['files']} files, {sizes['bytes'] / 1e6:.0f} MB "
        f"({sizes['ignored_files']} files, {sizes['ignored_bytes'] / 1e6:.0f} MB of them .gitignore'd)"
    )
    print(f"load average at the end: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores; median of {runs} runs")
    print(f"{'code':<32} {'fix: start to 1st request':>26} {'shadow open':>12} {'(CPU)':>8} {'shadow close':>13}")
    for name, values in figures.items():
        print(
            f"{name:<32} {statistics.median(values['first']):>24.2f} s {statistics.median(values['open']):>10.2f} s "
            f"{statistics.median(values['cpu']):>6.2f} s {statistics.median(values['close']):>11.2f} s"
        )
    print(
        json.dumps({name: {k: [round(x, 3) for x in v] for k, v in values.items()} for name, values in figures.items()})
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--files", type=int, default=5000)
    parser.add_argument("--mb", type=int, default=200)
    parser.add_argument("--baseline-rev", default=None, help="revision to compare with (default: merge base with main)")
    parser.add_argument("--code", type=Path, default=ROOT, help="the code tree to measure (default: this checkout)")
    parser.add_argument(
        "--baseline-code", type=Path, default=None, help="a code tree to compare with, instead of a revision"
    )
    args = parser.parse_args()
    tmp = Path(tempfile.mkdtemp(prefix="agentls-bench-"))
    try:
        sizes = build_workspace(tmp / "bigproj", args.files, args.mb)
        if args.baseline_code is not None:
            baseline = (str(args.baseline_code), args.baseline_code.resolve())
        else:
            short = export_revision(args.baseline_rev or merge_base(), tmp / "baseline")
            baseline = (f"baseline {short}", tmp / "baseline")
        head = subprocess.run(
            ["git", "-C", str(ROOT), "rev-parse", "--short", "HEAD"], capture_output=True, text=True, check=True
        ).stdout.strip()
        name = f"this tree (HEAD {head})" if args.code == ROOT else str(args.code)
        codes = {name: args.code.resolve(), baseline[0]: baseline[1]}
        report(measure(codes, tmp / "bigproj", args.runs), sizes, args.runs)
    finally:
        shutil.rmtree(tmp, ignore_errors=True)


if __name__ == "__main__":
    main()
