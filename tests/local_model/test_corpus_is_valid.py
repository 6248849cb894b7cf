"""Every fix-rate benchmark task is a real bug: its test fails as shipped and passes with fix.patch.

All buggy copies run in one pytest process and all fixed copies in another
(module and test names are unique across the corpus), so this stays fast.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tomllib
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path

CORPUS = Path(__file__).resolve().parents[2] / "bench" / "corpus"
TASKS = sorted(p for p in CORPUS.iterdir() if (p / "task.toml").is_file())


def _task_meta(task: Path) -> dict:
    return tomllib.loads((task / "task.toml").read_text(encoding="utf-8"))


def _copy(dest: Path, apply_fix: bool) -> None:
    for task in TASKS:
        target = dest / task.name
        shutil.copytree(task, target, ignore=shutil.ignore_patterns("task.toml", "fix.patch", "__pycache__"))
        if apply_fix:
            out = subprocess.run(["git", "apply", "--unsafe-paths", str(task / "fix.patch")], cwd=target,
                                 capture_output=True, text=True)
            assert out.returncode == 0, f"{task.name}: fix.patch does not apply: {out.stderr}"


def _outcomes(root: Path) -> dict[str, Counter]:
    """Run pytest once over every task under root; per task, how many tests passed / failed."""
    xml = root / "report.xml"
    env = {k: v for k, v in os.environ.items() if not k.startswith("PYTEST")}
    env["PYTEST_DISABLE_PLUGIN_AUTOLOAD"] = "1"
    subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider", f"--junitxml={xml}", str(root)],
                   cwd=root, capture_output=True, text=True, env=env, timeout=120)
    results: dict[str, Counter] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        task = case.get("classname", "").split(".")[0]
        failed = case.find("failure") is not None or case.find("error") is not None
        results.setdefault(task, Counter())["failed" if failed else "passed"] += 1
    return results


def test_corpus_is_big_and_varied():
    assert len(TASKS) >= 30
    kinds = Counter(_task_meta(t)["kind"] for t in TASKS)
    assert len(kinds) >= 12, kinds
    for task in TASKS:
        meta = _task_meta(task)
        assert {"kind", "module", "test", "summary"} <= meta.keys(), task.name
        assert (task / meta["module"]).is_file() and (task / meta["test"]).is_file(), task.name
        assert (task / "fix.patch").read_text().startswith(f"--- a/{meta['module']}"), task.name


def test_each_bug_fails_as_shipped_and_passes_when_fixed(tmp_path: Path):
    _copy(tmp_path / "buggy", apply_fix=False)
    _copy(tmp_path / "fixed", apply_fix=True)
    buggy = _outcomes(tmp_path / "buggy")
    fixed = _outcomes(tmp_path / "fixed")
    names = {t.name for t in TASKS}
    assert set(buggy) == names and set(fixed) == names, "every task must be collected in both runs"
    not_failing = sorted(n for n in names if buggy[n]["failed"] == 0)
    not_fixed = sorted(n for n in names if fixed[n]["failed"] or not fixed[n]["passed"])
    assert not_failing == [], f"tests pass on the buggy code: {not_failing}"
    assert not_fixed == [], f"tests still fail with fix.patch: {not_fixed}"
