"""A change that makes the tests pass by swallowing their errors is refused, and the result says why.

A 30-line project: a `@contextmanager` whose `finally:` crashes on a missing log, and a read that upper-cases
the text (the test's own assertion fails in the `with` block). The one green single edit is
`if log is None: return` in the `finally:`: the `return` discards the crash and the test's `AssertionError`
with it. It was reported "fixed" with 0 model calls; now the search refuses it before trying it, the coder's
same edit is undone by the gate, and the run ends unfixed with the reasons in `--json`'s `refused`.
`agentls fix --json` in-process, the real openai client against the scripted server, a real sandbox.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from engine_support import journal_records, make_project, snapshot

PROJECT = {
    "logfile.py": (
        "from contextlib import contextmanager\n\n\n"
        "@contextmanager\ndef opened(path, log=None):\n    handle = open(path)\n    try:\n"
        "        yield handle.read().upper()\n    finally:\n        handle.close()\n        log.append(path)\n\n\n"
        "def first_word(path):\n    with opened(path) as text:\n        return text.split()[0]\n"
    ),
    "test_logfile.py": (
        "from logfile import opened\n\n\n"
        "def test_reads_the_text(tmp_path):\n    path = tmp_path / 'a.txt'\n    path.write_text('hello world')\n"
        "    with opened(path) as text:\n        assert text == 'hello world'\n\n\n"
        "def test_logs_the_path(tmp_path):\n    path = tmp_path / 'b.txt'\n    path.write_text('Hello world')\n"
        "    log = []\n    with opened(path, log):\n        pass\n    assert log == [path]\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}
SWALLOWING_EDIT = {"edits": [{"path": "logfile.py", "search": "        log.append(path)\n",
                              "replace": "        if log is None:\n            return\n        log.append(path)\n"}],
                   "explanation": "guard the missing log"}
PLAN = {"approach": "guard", "subtasks": [{"id": "t1", "description": "fix opened in logfile.py", "priority": 5,
                                           "dependencies": [], "files": ["logfile.py"]}]}


@pytest.fixture(autouse=True)
def _search_on(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("AGENTLS_SEARCH", "1")


def test_a_return_in_finally_is_refused_and_the_run_ends_unfixed_saying_why(tmp_path: Path, scripted_llm, run_fix):
    project = make_project(tmp_path / "proj", PROJECT)
    scripted_llm.default("coder", SWALLOWING_EDIT)
    scripted_llm.default("planner", PLAN)
    scripted_llm.default("reflector", {"hypothesis": "the log is None", "file": "logfile.py", "change": "guard",
                                       "confidence": "low"})
    before = snapshot(project)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--max-iterations", "1", "--apply")

    out = run.json
    assert out["status"] == "unfixed" and out["files_changed"] == [], run.stdout + run.stderr
    assert snapshot(project) == before, "nothing applied"
    assert out["refused"] and all("swallowing their errors" in why for why in out["refused"]), out["refused"]
    assert any(why.startswith("logfile.py:11 ") and "`return` in a `finally:`" in why for why in out["refused"])
    records = journal_records(project, out["run_id"])
    assert not any(r["type"] == "search" and r.get("found") for r in records), "the search reports no fix"
    (refused,) = [r for r in records if r["type"] == "search_refused"]
    assert len(refused["candidates"]) >= 1
    gate = [r for r in records if r["type"] == "gate_refused"]
    assert gate and "`return` in a `finally:`" in gate[0]["reason"], "the coder's same edit is undone by the gate"


def test_a_patch_that_swallows_the_tests_errors_is_refused_by_verify_patch(tmp_path: Path):
    """MCP's `verify_patch` (checks/verify_patch.py) refuses the same change as a diff, before its run, and writes
    nothing even with `apply`."""
    import asyncio

    from agent_core.checks.verify_patch import verify_patch
    from agent_core.settings import Settings

    project = make_project(tmp_path / "proj", PROJECT)
    before = snapshot(project)
    diff = ("--- a/logfile.py\n+++ b/logfile.py\n@@ -10,2 +10,4 @@\n         handle.close()\n"
            "+        if log is None:\n+            return\n         log.append(path)\n")

    verdict = asyncio.run(verify_patch(Settings(), project, diff, apply=True))

    assert not verdict.verified and not verdict.applied and verdict.report is None, "refused before the patched run"
    assert verdict.refused is not None and verdict.refused.startswith(
        "the patch is refused: it makes the tests pass by swallowing their errors: logfile.py:12: `return` in a "
        "`finally:`"), verdict.refused
    assert snapshot(project) == before


CHECKED = {  # a package that ships the check its tests use (as pyparsing.testing and numpy.testing do)
    "calc.py": "def mean(values):\n    return sum(values) / (len(values) + 1)\n",
    "checks.py": "def assert_close(a, b, tol=1e-9):\n    if abs(a - b) > tol:\n"
                 "        raise AssertionError(f'{a} != {b}')\n",
    "test_calc.py": "from calc import mean\nfrom checks import assert_close\n\n\n"
                    "def test_mean():\n    assert_close(mean([1, 2, 3]), 2.0)\n",
}


def test_a_patch_that_loosens_the_tests_own_check_is_refused_by_verify_patch(tmp_path: Path):
    """A patch that makes the failing test pass by loosening the assertion helper it calls is refused before its
    run, with the reason; the patch that fixes the code is verified."""
    import asyncio

    from agent_core.checks.verify_patch import verify_patch
    from agent_core.settings import Settings

    project = make_project(tmp_path / "proj", CHECKED)
    before = snapshot(project)
    loosened = ("--- a/checks.py\n+++ b/checks.py\n@@ -1,3 +1,3 @@\n def assert_close(a, b, tol=1e-9):\n"
                "-    if abs(a - b) > tol:\n+    if abs(a - b) > tol + 1:\n"
                "         raise AssertionError(f'{a} != {b}')\n")
    fixed = ("--- a/calc.py\n+++ b/calc.py\n@@ -1,2 +1,2 @@\n def mean(values):\n"
             "-    return sum(values) / (len(values) + 1)\n+    return sum(values) / len(values)\n")

    refused = asyncio.run(verify_patch(Settings(), project, loosened, apply=True))
    right = asyncio.run(verify_patch(Settings(), project, fixed))

    assert not refused.verified and not refused.applied and refused.report is None, "refused before its run"
    assert refused.refused == ("the patch is refused: checks.py:1: changes `assert_close`, which the tests check "
                               "with (it calls `raise AssertionError`): a change there weakens their check, it "
                               "does not fix the code"), refused.refused
    assert snapshot(project) == before
    assert right.verified and right.refused is None, right
