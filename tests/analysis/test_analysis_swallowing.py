"""Changes that pass by doing less, as a table: what swallows exceptions, and an early return only."""

from __future__ import annotations

import pytest

from agent_core.analysis import pysyntax
from agent_core.analysis.swallowing import assertion_helpers, early_return, swallowing_findings, weakened_checks

SESSION = ("from contextlib import contextmanager\n\n\n@contextmanager\ndef opened(path, log=None):\n"
           "    handle = open(path)\n    try:\n        yield handle\n    finally:\n        handle.close()\n"
           "        log.append(path)\n")
QUIET = "class Quiet:\n    def __exit__(self, *exc):\n        self.closed = True\n"
PARSE = ("def parse(text):\n    try:\n        return int(text)\n    except ValueError:\n        return None\n")
LOOP = ("def first(rows):\n    for row in rows:\n        try:\n            return row[0]\n"
        "        finally:\n            pass\n")


@pytest.mark.parametrize("original, changed, types, found", [
    (SESSION, SESSION.replace("        log.append", "        if log is None:\n            return\n        log.append"),
     [], ["`return` in a `finally:`"]),
    (LOOP, LOOP.replace("            pass", "            continue"), [], ["`continue` in a `finally:`"]),
    (QUIET, QUIET.replace("self.closed = True", "self.closed = True\n        return True"), [],
     ["`__exit__` returns True"]),
    (PARSE, PARSE.replace("except ValueError", "except Exception"), ["KeyError"],
     ["a broad `except Exception:` that does not raise again swallows KeyError"]),
    (PARSE, PARSE.replace("except ValueError", "except"), [], ["a broad `except:` that does not raise again"]),
    # not swallowing: a narrow handler, a broad one that raises again, pytest's own BaseExceptions, a loop's break
    (PARSE, PARSE.replace("except ValueError", "except (ValueError, TypeError)"), ["TypeError"], []),
    (PARSE, PARSE.replace("except ValueError:\n        return None", "except Exception:\n        raise"), [], []),
    (PARSE, PARSE.replace("except ValueError", "except Exception"), ["Failed"], []),
    (LOOP, LOOP.replace("            pass", "            for _ in row:\n                break"), [], []),
    # already there: not added by the change
    (SESSION.replace("        log.append(path)", "        return"), SESSION.replace("        log.append(path)",
                                                                                  "        return\n"), [], []),
])
def test_what_a_change_adds_that_swallows_exceptions(original: str, changed: str, types: list[str],
                                                      found: list[str]) -> None:
    result = swallowing_findings(original, changed, types)
    assert len(result) == len(found) and all(part in why for (_, why), part in zip(result, found, strict=True)), result


def test_a_finding_is_located_in_the_changed_text() -> None:
    changed = SESSION.replace("        log.append", "        if log is None:\n            return\n        log.append")
    assert [line for line, _ in swallowing_findings(SESSION, changed)] == [12]


STRIP = "def clean(name):\n    name = name.strip()\n    return name.lower()\n"


@pytest.mark.parametrize("changed, found", [
    (STRIP.replace("    name = name", "    if name is None:\n        return\n    name = name"), 2),
    (STRIP.replace("    name = name", "    if not name:\n        return None\n    name = name"), 2),
    (STRIP.replace("    name = name", "    if name is None:\n        name = ''\n    name = name"), None),  # a default
    (STRIP.replace("    name = name", "    name = str(name)\n    name = name"), None),  # a value converted
    (STRIP.replace("    name = name", "    if name is None:\n        return ''\n    name = name"), None),
    (STRIP.replace("    if", "    if").replace("name.lower()", "name.upper()").replace(
        "    name = name", "    if name is None:\n        return\n    name = name"), None),  # more than a guard
])
def test_an_early_return_only_is_recognised(changed: str, found: int | None) -> None:
    result = early_return(STRIP, changed)
    assert (result[0] if result else None) == found, result
    if result:
        assert "only adds an early `return` to `clean`" in result[1]


CHECKS = (
    "class Asserts:\n    def assertRows(self, rows, expected):\n        self.assertEqual(len(rows), len(expected))\n"
    "        for row in rows:\n            self.assertIn(row, expected)\n\n"
    "    def helper(self):\n        def inner():\n            self.assertTrue(self.rows)\n"
    "        return inner\n\n\n"
    "def assert_close(a, b):\n    if abs(a - b) > 1e-9:\n        raise AssertionError(a, b)\n\n\n"
    "def must(flag):\n    if not flag:\n        pytest.fail('flag unset')\n\n\n"
    "def parse(text):\n    assert text, 'an invariant, not a test check'\n    if not text.strip():\n"
    "        raise ValueError(text)\n    return text.split()\n\n\n"
    "class Parser:\n    def expect(self, token):\n        if token != 'end':\n            self.fail('unexpected')\n"
    "        if not self.stack:\n            raise AssertionError('internal parsing error')\n"
    "        self.assert_open()\n"
)


def test_the_functions_that_fail_a_test_when_a_check_does_not_hold() -> None:
    found = {name: how for _, _, name, how in assertion_helpers(pysyntax.parse(CHECKS))}
    assert found == {"Asserts.assertRows": "self.assertEqual", "Asserts.helper.inner": "self.assertTrue",
                     "assert_close": "raise AssertionError", "must": "pytest.fail"}, \
        "a library's own `self.fail`, an internal `raise AssertionError`, `self.assert_open()` are not checks"


def test_a_change_to_an_assertion_helper_is_found_a_change_beside_it_is_not() -> None:
    loosened = CHECKS.replace("> 1e-9", "> 1e-3")
    removed = CHECKS.replace("            self.assertIn(row, expected)\n", "            pass\n")
    beside = CHECKS.replace("raise ValueError(text)", "raise TypeError(text)")
    assert weakened_checks(CHECKS, loosened) == [(13, "changes `assert_close`, which the tests check with (it calls "
                                                      "`raise AssertionError`): a change there weakens their check, "
                                                      "it does not fix the code")]
    assert [why.split(",")[0] for _, why in weakened_checks(CHECKS, removed)] == ["changes `Asserts.assertRows`"]
    assert weakened_checks(CHECKS, beside) == [] and weakened_checks(CHECKS, CHECKS) == []
