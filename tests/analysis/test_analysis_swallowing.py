"""Changes that pass by doing less, as a table: what swallows exceptions, and an early return only."""

from __future__ import annotations

import pytest

from agent_core.analysis.swallowing import early_return, swallowing_findings

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
