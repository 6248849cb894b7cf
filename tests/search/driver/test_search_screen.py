"""The search's screen (search/driver/screen.py): candidates that swallow the tests' errors are refused, early
returns go last. The end-to-end case (a 30-line project whose `return` in a `finally:` was reported "fixed and
verified") is tests/pipeline/test_pipeline_swallowing.py."""

from __future__ import annotations

from pathlib import Path

from agent_core.search import Mutant
from agent_core.search.driver.screen import Screen
from engine_support import make_project

LOGFILE = (  # a context manager whose `finally:` a guard could turn into a swallowing `return`
    "from contextlib import contextmanager\n\n\n@contextmanager\ndef opened(path, log=None):\n"
    "    handle = open(path)\n    try:\n        yield handle.read()\n    finally:\n        handle.close()\n"
    "        log.append(path)\n"
)


def test_the_search_tries_a_candidate_that_only_returns_early_last_and_refuses_a_swallowing_one(tmp_path: Path):
    """The search's screen over the catalogue's candidates, on a real file: the swallowing one is dropped
    with the reason, the early-return-only one goes after the one that keeps the function working."""
    project = make_project(tmp_path / "proj", {"logfile.py": LOGFILE})
    guard = Mutant("logfile.py", 6, "    if path is None:\n        return\n    handle = open(path)", "a guard")
    default = Mutant("logfile.py", 6, "    handle = open(path or 'default.txt')", "a default")
    swallowing = Mutant("logfile.py", 11, "        if log is None:\n            return\n        log.append(path)",
                        "a guard in the finally")
    screen = Screen(project, ["AttributeError", "AssertionError"])

    kept = screen.early_last(screen.kept([guard, swallowing, default]))

    assert kept == [default, guard]
    assert len(screen.refused) == 1 and screen.refused[0].startswith("logfile.py:11 (a guard in the finally) refused")
