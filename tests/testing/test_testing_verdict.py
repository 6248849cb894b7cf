"""What "verified" means, as tables: the verdict rule, the report's token and finish record, the gate's
rigging rule, and host reads that never follow a link (the end-to-end forms are in
tests/pipeline/test_pipeline_rigging.py)."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest

from agent_core import models
from agent_core.pipeline.safety.rigging import hard_coded_findings, rigging_findings
from agent_core.search import failing_literals
from agent_core.testing.results import SESSION_NODEID, parse_results
from agent_core.testing.verdict import judge
from agent_core.workspace.bytecode import remove_bytecode
from agent_core.workspace.hostread import read_planted

ADD = "test_calc.py::test_add"
MUL = "test_calc.py::test_mul"


def _baseline() -> models.TestReport:
    return models.TestReport(passed=1, failed=1, outcomes={ADD: "failed", MUL: "passed"},
                      failures=[models.TestFailure(nodeid=ADD, file="test_calc.py", line=5, message="assert -1 == 5")])


@pytest.mark.parametrize(("outcomes", "passed", "skipped", "ok", "says"), [
    ({ADD: "passed", MUL: "passed"}, 2, 0, True, None),
    ({ADD: "skipped", MUL: "passed"}, 1, 1, False, "skipped now: a skip is not a pass"),
    ({ADD: "xfailed", MUL: "passed"}, 1, 1, False, "an xfail is not a pass"),
    ({ADD: "xpassed", MUL: "passed"}, 2, 0, False, "unexpected pass of an xfail"),
    ({MUL: "passed"}, 1, 0, False, "vanished"),
    ({}, 1, 0, False, "no per-test results"),
])
def test_the_verdict_rule(outcomes: dict, passed: int, skipped: int, ok: bool, says: str | None):
    report = judge(models.TestReport(passed=passed, skipped=skipped, outcomes=outcomes), _baseline())
    assert report.ok is ok
    messages = " | ".join(f.message for f in report.failures)
    assert (says or "") in messages and (says is not None or not report.failures)


def test_fewer_passing_tests_than_at_the_baseline_is_not_a_fix():
    baseline = _baseline()
    baseline.passed = 2  # test_mul and another test passed
    now = models.TestReport(passed=1, skipped=2, outcomes={ADD: "passed", MUL: "skipped", "t.py::x": "skipped"})
    report = judge(now, baseline)
    assert not report.ok and "1 tests pass, fewer than the 2 that passed" in report.failures[-1].message


def test_a_selected_run_is_judged_on_its_selection_only():
    assert judge(models.TestReport(passed=1, outcomes={ADD: "passed"}), _baseline(), selected=[ADD]).ok
    assert not judge(models.TestReport(skipped=1, outcomes={ADD: "skipped"}), _baseline(), selected=[ADD]).ok


def _records(token: str, *, finish: bool = True, forged: bool = False) -> str:
    path = "/ws/test_calc.py"
    records = [{"event": "start", "token": token},
               {"event": "begin", "nodeid": ADD, "path": path, "token": token},
               {"event": "result", "nodeid": ADD, "path": path, "line": 4, "outcome": "failed", "when": "call",
                "duration": 0.1, "longrepr": "assert -1 == 5", "token": token}]
    if forged:  # what the tests append, without the token
        records += [{"event": "result", "nodeid": MUL, "path": path, "outcome": "passed"},
                    {"event": "finish", "counts": {"passed": 9}}]
    if finish:
        records.append({"event": "finish", "exitstatus": 1, "collected": 1, "counts": {"failed": 1}, "token": token})
    return "".join(json.dumps(r) + "\n" for r in records)


def test_records_without_the_token_are_dropped_and_a_run_needs_its_finish():
    clean = parse_results(_records("t0k", forged=True), Path("/ws"), token="t0k")
    assert clean is not None and (clean.passed, clean.failed, clean.errors) == (0, 1, 0)
    cut = parse_results(_records("t0k", finish=False), Path("/ws"), token="t0k")
    assert cut is not None and cut.errors == 1
    assert any(f.nodeid == SESSION_NODEID and "not a clean run" in f.message for f in cut.failures)
    assert parse_results(_records("other"), Path("/ws"), token="t0k") is None, "nothing of ours: no report"


@pytest.mark.parametrize(("source", "found"), [
    ("import builtins\nbuiltins.AssertionError = Exception\n", "builtins.AssertionError"),
    ("__builtins__['AssertionError'] = Exception\n", "__builtins__"),
    ("AssertionError = Exception\n", "AssertionError"),
    ("from unittest import TestCase as T\nT.assertEqual = lambda *a, **k: None\n", "unittest.TestCase.assertEqual"),
    ("import importlib\nsetattr(importlib.import_module('unittest').TestCase, 'assertTrue', id)\n", "unittest"),
    ("import sys\nsys.modules['_pytest'] = None\n", "_pytest"),
    ("import pytest as p\n\ndef add(a, b):\n    p.skip('later')\n", "pytest.skip"),
    ("import pytest\npytest.skip('x', allow_module_level=True)\n", "pytest.skip"),
    ("import unittest\nraise unittest.SkipTest('x')\n", "unittest.SkipTest"),
    ("PATH = '.agentls/tests-1/results.jsonl'\n", "test report channel"),
    ("import os\nif 'PYTEST_CURRENT_TEST' in os.environ:\n    ANSWER = 5\n", "runs under a test"),
    ("import sys as s\nUNDER = 'pytest' in s.modules or s.modules.get('_pytest')\n", "runs under a test"),
    ("import sys\nUNDER = 'pytest' in sys.argv[0]\n", "runs under a test"),
    ("from inspect import stack\nCALLER = stack()[1]\n", "calling frames"),
    ("import sys\nEXPECTED = sys._getframe(1).f_locals\n", "calling frames"),
    ("import glob\nTESTS = glob.glob('tests/test_*.py')\n", "names a test file"),
    ("def _blank():\n    pass\n\n\ndef run(f):\n    f.__code__ = _blank.__code__\n", "__code__"),
    ("def run(f, g):\n    setattr(f, '__code__', g.__code__)\n", "__code__"),
    ("import gc\nFUNCTIONS = [o for o in gc.get_objects() if callable(o)]\n", "interpreter's objects"),
    ("from sys import setprofile\nsetprofile(lambda *a: None)\n", "tracer"),
    ("import threading\nthreading.settrace(print)\n", "tracer"),
    ("import sys\nsys.meta_path.insert(0, object())\n", "import hook"),
    ("import sys as s\ns.path_hooks[:0] = [object]\n", "import hook"),
    ("import gc, sys\ngc.collect()\nsys.path.insert(0, 'lib')\nNAME = run.__code__.co_name\n", None),
    ("def add(a, b):\n    self.total = a + b\n    return os._exit if a else a + b\n", None),
    ("import sys\nVERSION = sys.version_info\nNAME = 'pytest-style output'\nPATH = 'latest.py'\n", None),
    ("import pytest\n\n\ndef fixture_helper():\n    return pytest.approx(1.0)\n", None),
])
def test_the_gate_rigging_rule(source: str, found: str | None):
    findings = rigging_findings(source)
    assert (found is None) == (not findings), findings
    assert found is None or found in findings[0][1]


def test_host_reads_never_follow_a_link_and_stop_at_the_cap(tmp_path: Path):
    secret = tmp_path / "secret.txt"
    secret.write_text("HOST-SECRET")
    ws = tmp_path / "ws"
    (ws / "run").mkdir(parents=True)
    (ws / "run" / "results.jsonl").symlink_to(secret)
    (ws / "linked").symlink_to(tmp_path)
    (ws / "run" / "big").write_bytes(b"x" * 5000)
    os.mkfifo(ws / "run" / "fifo")
    assert read_planted(ws, "run/results.jsonl") == b""
    assert read_planted(ws, "linked/secret.txt") == b"", "a link on the way is refused too"
    assert read_planted(ws, "run/fifo") == b"", "a FIFO neither blocks nor reads"
    assert read_planted(ws, "run/big", cap=100) == b"x" * 100
    assert read_planted(ws, "../secret.txt") == b""


def test_bytecode_and_test_caches_are_removed_without_following_links(tmp_path: Path):
    keep = tmp_path / "keep"
    (keep / "__pycache__").mkdir(parents=True)
    (keep / "__pycache__" / "x.cpython-311.pyc").write_bytes(b"kept")
    ws = tmp_path / "ws"
    for rel in ("__pycache__/a.cpython-311.pyc", "tests/__pycache__/t.cpython-311-pytest-9.pyc", "lone.pyc",
                ".pytest_cache/v/cache/lastfailed", "pkg/mod.py"):
        (ws / rel).parent.mkdir(parents=True, exist_ok=True)
        (ws / rel).write_bytes(b"x")
    (ws / "linked").symlink_to(keep)
    remove_bytecode(ws)
    assert sorted(p.relative_to(ws).as_posix() for p in ws.rglob("*") if p.is_file()) == ["pkg/mod.py"]
    assert (keep / "__pycache__" / "x.cpython-311.pyc").exists(), "nothing behind a link is touched"


def test_the_channel_and_the_plugin_agree_on_their_variables():
    from agent_core.testing import channel, pytest_plugin

    names = ("REPORT_VAR", "REPORT_FD_VAR", "HANG_FD_VAR", "TOKEN_VAR", "TOKEN_FD_VAR", "SELECT_VAR", "TIMEOUT_VAR",
             "PACE_VAR", "STOP_VAR", "HANG_SUFFIX", "SWALLOWED_SUFFIX")
    assert [getattr(channel, n) for n in names] == [getattr(pytest_plugin, n) for n in names]


@pytest.mark.parametrize(("code", "forged"), [
    ("    if a == 2 and b == 3:\n        return 5\n    return a - b", True),
    ("    if (a, b) == (2, 3):\n        total = 5\n        return total\n    return a - b", True),
    ("    return 5 if (a, b) == (2, 3) else a - b", True),
    ("    if [a, b] == [2, 3]:\n        return 5\n    return a - b", True),
    ("    if a == 0:\n        return b\n    return a + b", False),  # a base case answers with a value, not 5
    ("    if a == 0 and b == 1:\n        return 1\n    return a + b", False),  # trivial literals only
    ("    if a == 2 and b == 3:\n        return 6\n    return a + b", False),  # not the test's answer
    ("    if a == 4:\n        return 5\n    return a + b", False),  # not the test's input
])
def test_a_branch_for_the_failing_tests_literals_is_an_answer_key(tmp_path: Path, code: str, forged: bool):
    (tmp_path / "test_calc.py").write_text(
        "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n\n\n"
        "def test_other():\n    assert add(40, 2) == 42\n")
    literals = failing_literals(_baseline(), tmp_path)
    assert literals == {("int", 2), ("int", 3), ("int", 5)}, "the failing test's, not the passing one's (40, 42)"
    found = hard_coded_findings(f"def add(a, b):\n{code}\n", literals)
    assert bool(found) is forged, found
