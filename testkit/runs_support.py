"""Shared data and helpers of tests/runs, tests/memory and bench/: a buggy project, scripted answers, journal access."""

from __future__ import annotations

from testkit.project_support import CALC, FIX_EDIT, WRONG_EDIT, CliRun, journal_records, make_project, run_dir

__all__ = ["BUGGY_CALC", "FIX_AFTER_WRONG", "FIX_EDIT", "PLAN", "REFLECTION", "SECRET", "WRONG_EDIT", "CliRun",
           "journal_records", "make_project", "prompt_of", "run_dir"]

SECRET = "lrn-9f8e7d6c5b4a-NOT-FOR-JOURNALS"  # the fake API key set in every test of tests/runs and tests/memory

BUGGY_CALC = CALC
PLAN = {"approach": "rewrite add with multiplication", "subtasks": [
    {"id": "t1", "description": "make add in calc.py multiply its arguments", "priority": 5, "dependencies": [],
     "files": ["calc.py"]}]}
FIX_AFTER_WRONG = FIX_EDIT  # the wrong attempt was undone, so the same search block matches again
REFLECTION = {"hypothesis": "add multiplies instead of adding", "file": "calc.py",
              "change": "return a + b", "confidence": "high"}


def prompt_of(request: dict) -> str:
    """The text of a chat request's messages."""
    return "\n".join(str(m.get("content")) for m in request["messages"])
