"""Templates the code's own shape asks for: a statement without effect (effects.py), an in-place method's None
bound (in_place.py), a default evaluated once at `def` time (guards.py)."""

from __future__ import annotations

import pytest

from agent_core import models
from agent_core.search.evidence.inputs import FailingInputs, failing_inputs
from agent_core.search.templates.table import EVIDENCE_TIER, TEMPLATE_TIER, template_mutants

SOURCE = '''\
import time


def grow(delay, factor, out, table):
    delay * factor
    out.count + 1
    table[0] == factor
    delay == factor == 2
    len(out) + 1
    return delay


def order(names, other):
    unique = list(names)
    unique = unique.sort(key=str.lower)
    result = other.sort()
    merged = other.copy().update(names)
    self_sorted = unique.copy()
    return unique, result, merged, self_sorted


def stamp(message, when=time.time(), parts=tuple(), size=int("3"), fresh=[]):
    return message, when, parts, size, fresh
'''
LINES = SOURCE.split("\n")


def _at(start: str) -> int:
    return next(i for i, text in enumerate(LINES, 1) if text.startswith(start))


def _found(start: str, prefix: str, inputs: FailingInputs | None = None) -> list[tuple[int, str]]:
    mutants = template_mutants("m.py", SOURCE, _at(start), **({"inputs": inputs} if inputs else {}))
    return [(m.tier, m.text) for m in mutants if m.description.startswith(prefix)]


@pytest.mark.parametrize("start, expected", [
    ("    delay * factor", "    delay *= factor"),
    ("    out.count + 1", "    out.count += 1"),
    ("    table[0] == factor", "    table[0] = factor"),
])
def test_a_statement_without_effect_is_made_the_binding_it_computes_for(start, expected):
    assert _found(start, f"`{LINES[_at(start) - 1].strip()}` has no effect") == [(EVIDENCE_TIER, expected)]


@pytest.mark.parametrize("start", ["    delay == factor == 2", "    len(out) + 1", "    return delay"])
def test_a_chained_comparison_a_call_or_a_used_value_is_no_statement_without_effect(start):
    assert not [m for m in template_mutants("m.py", SOURCE, _at(start)) if "has no effect" in m.description]


NONE_SEEN = FailingInputs(nones=True)


@pytest.mark.parametrize("start, expected", [
    ("    unique = unique.sort", ["    unique.sort(key=str.lower)"]),  # the object itself: the binding dropped
    ("    result = other.sort()", ["    result = sorted(other)", "    result = other\n    result.sort()"]),
    ("    merged = other.copy().update(names)", ["    merged = other.copy()\n    merged.update(names)"]),
    ("    self_sorted = unique.copy()", []),  # copy() returns the copy
])
def test_an_in_place_methods_none_bound_to_a_name_is_evidence_when_a_failing_test_saw_none(start, expected):
    method = start.split(".")[-1].split("(")[0]  # `.update()` changes its object, not `.update` -> `.add`
    assert _found(start, f"`.{method}()` changes", NONE_SEEN) == [(EVIDENCE_TIER, text) for text in expected]
    assert _found(start, f"`.{method}()` changes") == [(TEMPLATE_TIER, text) for text in expected], \
        "an ordinary template otherwise"


def _failing(message: str) -> models.TestReport:
    return models.TestReport(failed=1, failures=[models.TestFailure(nodeid="t.py::t", file="t.py", line=1,
                                                                    message=message)])


def test_the_failing_messages_say_whether_they_show_none(tmp_path):
    assert failing_inputs(_failing("AssertionError: assert None == ['Ann', 'BOB']"), tmp_path).nones
    assert failing_inputs(_failing("TypeError: 'NoneType' object is not iterable"), tmp_path).nones
    assert not failing_inputs(_failing("AssertionError: assert 'Nonesuch' == 'x'"), tmp_path).nones


def test_a_default_call_is_made_per_call_as_evidence_but_not_a_constant_one():
    found = [m for m in template_mutants("m.py", SOURCE, _at("    return message, when"))
             if "made per call" in m.description]
    assert [(m.tier, m.description) for m in found] == [
        (EVIDENCE_TIER, "default evaluated once `when=time.time()` made per call: None, then `time.time()` when "
                        "not given"),
        (EVIDENCE_TIER, "mutable default `fresh=[]` made per call: None, then `[]` when not given"),
    ], "`tuple()` and `int(...)` are the same value whenever made"
    assert ("def stamp(message, when=None, parts=tuple(), size=int(\"3\"), fresh=[]):\n"
            "    if when is None:\n        when = time.time()\n    return message") in found[0].applied(SOURCE)
