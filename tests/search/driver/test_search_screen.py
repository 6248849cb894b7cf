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


SERVICE = (  # a module whose candidates the screen judges in their top-level statement, not the whole file
    "import functools\n\nLIMIT = 3\n\n\nclass Pool:\n    def __init__(self):\n        self.items = []\n\n"
    "    def take(self, n):\n        try:\n            return self.items[:n]\n        finally:\n"
    "            self.items = self.items[n:]\n\n    def __exit__(self, *exc):\n        self.items.clear()\n"
    "        return False\n\n\n@functools.lru_cache\ndef parse(text):\n    value = int(text)\n"
    "    return value * LIMIT\n"
)


def test_each_candidate_is_judged_in_its_top_level_statement_as_in_the_whole_file(tmp_path: Path):
    """The screen reads only the class or function a candidate changes (a 5,600-line module parsed twice per
    candidate took minutes for 1,000): a `return` in a method's `finally:`, an `__exit__` made to return True
    and a broad `except` are refused, a narrow one and a module-level change kept, a guard in a decorated
    function put last; each decision is the one the whole file gives."""
    from agent_core.analysis.swallowing import early_return, swallowing_findings

    project = make_project(tmp_path / "proj", {"service.py": SERVICE})
    in_finally = Mutant("service.py", 14, "            return []", "a return in the finally")
    exit_true = Mutant("service.py", 18, "        return True", "__exit__ returns True")
    broad = Mutant("service.py", 23, "    try:\n        value = int(text)\n    except Exception:\n        value = 0",
                   "a broad except", end=23)
    narrow = Mutant("service.py", 23, "    try:\n        value = int(text)\n    except ValueError:\n        value = 0",
                    "a narrow except", end=23)
    limit = Mutant("service.py", 3, "LIMIT = 4", "a constant")
    guard = Mutant("service.py", 23, "    if not text:\n        return\n    value = int(text)", "a guard")
    everything = [in_finally, exit_true, broad, guard, narrow, limit]
    screen = Screen(project, ["ValueError"])

    kept = screen(everything)

    assert kept == [narrow, limit, guard]
    assert [r.split(" (")[0] for r in screen.refused] == ["service.py:14", "service.py:18", "service.py:23"]
    for mutant in everything:  # the same answers as the whole file's
        whole = SERVICE, mutant.applied(SERVICE)
        assert bool(swallowing_findings(*whole, ["ValueError"])) == (mutant not in kept), mutant.description
        assert bool(early_return(*whole)) == (mutant is guard), mutant.description
