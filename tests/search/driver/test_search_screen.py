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


def test_a_candidate_reading_a_name_nothing_binds_there_is_dropped_untried_and_counted(tmp_path: Path):
    """A name swapped for a local assigned further down (UnboundLocalError) or for one bound nowhere (NameError)
    can only crash where it is read: the screen drops it, counts it, and keeps the rest in their order."""
    project = make_project(tmp_path / "proj", {"service.py": SERVICE})
    later = Mutant("service.py", 23, "    value = int(text) if text else total\n    total = value",
                   "`total` read first")
    nowhere = Mutant("service.py", 24, "    return value * LIMT", "`LIMIT` -> `LIMT`")
    kept_one = Mutant("service.py", 24, "    return value * LIMIT + 1", "`+ 1` added")
    in_method = Mutant("service.py", 12, "            return self.items[:LIMIT]", "`n` -> `LIMIT`")
    screen = Screen(project, ["ValueError"])

    assert screen([later, kept_one, nowhere, in_method]) == [kept_one, in_method]
    assert screen.unbound == 2 and screen.refused == [], "counted, not noted as an attack"


HELPERS = (  # a package shipping checks for its tests (as pyparsing.testing does), beside its own code
    "import unittest\n\n\nclass ResultsAsserts:\n"
    "    def assertParsed(self, result, expected_list=None, expected_dict=None):\n"
    "        if expected_list is not None:\n            self.assertEqual(expected_list, result.as_list())\n"
    "        if expected_dict is not None:\n            self.assertEqual(expected_dict, result.as_dict())\n\n\n"
    "def assert_close(a, b, tol=1e-9):\n    if abs(a - b) > tol:\n        raise AssertionError(f'{a} != {b}')\n\n\n"
    "def parse_int(text):\n    if not text.strip():\n        raise ValueError('empty')\n    return int(text)\n"
)


def test_a_candidate_that_changes_the_tests_own_check_is_refused(tmp_path: Path):
    """The search made a real pyparsing bug's test pass by putting an `assertEqual` of the package's test helper
    under an `if`: a candidate inside a function that fails a test when a check does not hold (`self.assert*`,
    `raise AssertionError`) is refused with the reason; the package's own code beside it is not."""
    project = make_project(tmp_path / "proj", {"testing.py": HELPERS})
    weakened = Mutant("testing.py", 7, "            if expected_dict is not None:\n"
                      "                self.assertEqual(expected_list, result.as_list())", "put under an if")
    looser = Mutant("testing.py", 13, "    if abs(a - b) > tol * 1000:", "a looser bound")
    fixed = Mutant("testing.py", 18, "    if not text or not text.strip():", "a guard widened")
    screen = Screen(project, ["AssertionError"])

    kept = screen([weakened, looser, fixed])

    assert kept == [fixed]
    assert [r.split(" (")[0] for r in screen.refused] == ["testing.py:7", "testing.py:13"]
    assert "changes `ResultsAsserts.assertParsed`, which the tests check with (it calls `self.assertEqual`)" \
        in screen.refused[0]
    assert "`raise AssertionError`" in screen.refused[1]
    assert screen.checks_at("testing.py", 17, 19) is None


def test_the_model_s_holes_are_not_cut_in_the_tests_own_checks(tmp_path: Path):
    from agent_core.search.driver.interleave import ranked_holes
    from agent_core.search.evidence.spectrum import Suspect

    project = make_project(tmp_path / "proj", {"testing.py": HELPERS})
    screen = Screen(project, [])
    suspect = Suspect("testing.py", "ResultsAsserts.assertParsed", 5, 19, [7, 18], 2.0, [2.0, 1.0])

    every = ranked_holes([suspect], {"testing.py": HELPERS}, 2)
    kept = ranked_holes([suspect], {"testing.py": HELPERS}, 2, lambda path, line: screen.checks_at(path, line, line))

    assert {h.first for h in every if h.kind == "line"} == {7, 18}
    assert {h.first for h in kept if h.kind == "line"} == {18}
