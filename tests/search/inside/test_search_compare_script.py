"""The sandbox side of telling two versions apart (search/inside/compare_script.py), run as the sandbox runs it: a
process on a project folder with a config; here on the host's interpreter (it is stdlib only)."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import agent_core.search.inside.compare_script as script

MODULE = "import time\n\n\ndef f(n):\n    return n\n"


def _compare(tmp_path: Path, versions: list[str], calls: list[list], call_s: float = 1.0) -> dict:
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "__init__.py").write_text("")
    (tmp_path / "pkg" / "mod.py").write_text(MODULE)
    folder = tmp_path / ".agentls" / "differ"
    folder.mkdir(parents=True)
    shutil.copyfile(script.__file__, folder / "differ.py")
    config = {"sys_path": ".", "module": "pkg.mod", "name": "f", "versions": versions, "calls": calls,
              "call_s": call_s, "budget_s": 20}
    (folder / "config.json").write_text(json.dumps(config))
    subprocess.run([sys.executable, ".agentls/differ/differ.py", ".agentls/differ/config.json"], cwd=tmp_path,
                   check=True, timeout=60)
    return json.loads((folder / "result.json").read_text())


def test_the_first_call_the_versions_answer_differently_is_the_finding(tmp_path: Path):
    versions = ["def f(n):\n    return 10 // n if n else 0\n", "def f(n):\n    return 10 // n\n"]
    result = _compare(tmp_path, versions, [[["5"], []], [["2"], []], [["0"], []], [["-1"], []]])

    assert result == {"tried": 3, "differs": {"call": 2, "results": [["value", "0"], ["raises", "ZeroDivisionError"]]}}


def test_a_call_one_version_does_not_finish_is_skipped_and_generators_are_compared_by_what_they_yield(
    tmp_path: Path,
):
    versions = [
        "def f(n):\n    while n < 0:\n        time.sleep(0.01)\n    return (i for i in range(n))\n",
        "def f(n):\n    return iter(list(range(n)) if n != 3 else [0, 1])\n",
    ]
    result = _compare(tmp_path, versions, [[["-1"], []], [["2"], []], [["3"], []]], call_s=0.3)

    assert result == {"tried": 3, "differs": {"call": 2, "results": [["value", "[0, 1, 2]"], ["value", "[0, 1]"]]}}


def test_versions_that_agree_on_every_call_report_how_many_were_tried(tmp_path: Path):
    versions = ["def f(n, k=1):\n    return n + k\n", "def f(n, k=1):\n    return k + n\n"]
    result = _compare(tmp_path, versions, [[["1"], []], [["2"], [["k", "5"]]], [["inf"], []]])

    assert result == {"tried": 3}, "a value whose repr is no literal is skipped"
