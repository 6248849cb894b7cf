"""Failure classification and signature normalisation, as tables."""

from __future__ import annotations

import pytest

from agent_core.agents.reflector.signatures import classify, normalise_message, signature
from agent_core.models import TestFailure as Failure
from agent_core.models import TestReport as Report


def _f(message: str, nodeid: str = "t.py::test_a", kind: str = "failure", tb: str = "") -> Failure:
    return Failure(nodeid=nodeid, file="t.py", line=3, message=message, kind=kind, traceback=tb)


@pytest.mark.parametrize(
    "message, category",
    [
        ("ImportError: cannot import name 'x' from 'm'", "import"),
        ("ModuleNotFoundError: No module named 'foo'", "import"),
        ("AttributeError: 'NoneType' object has no attribute 'y'", "attribute"),
        ("NameError: name 'z' is not defined", "name"),
        ("TypeError: f() takes 1 positional argument but 2 were given", "type"),
        ("AssertionError: assert 3 == 4", "assertion"),
        ("assert 3 == 4", "assertion"),
        ("SyntaxError: invalid syntax", "syntax"),
        ("IndentationError: unexpected indent", "syntax"),
        ("ZeroDivisionError: division by zero", "other"),
    ],
)
def test_classification(message, category):
    assert classify(_f(message)) == category


def test_collection_errors_timeouts_and_limits():
    assert classify(_f("error collecting t.py", nodeid="t.py", kind="error")) == "collection"
    assert classify(_f("x"), Report(timed_out=True)) == "timeout"
    assert classify(_f("x"), Report(limit_hit="memory")) == "sandbox_limit"


@pytest.mark.parametrize(
    "a, b",
    [
        ("assert 3 == 4", "assert 17 == 2"),
        (
            "AttributeError: <Foo object at 0x7f3a2b> has no attribute 'bar'",
            "AttributeError: <Foo object at 0x55aa01> has no attribute 'baz'",
        ),
        ('File "/tmp/agentls-x1/proj/a.py", line 12, in f', 'File "/home/u/proj/a.py", line 99, in f'),
        ("KeyError: 'alpha'", 'KeyError: "beta"'),
        ("ValueError: bad value 1.5e3 at /srv/x/y.py:44", "ValueError: bad value 2 at /var/q/z.py:7"),
    ],
)
def test_volatile_parts_do_not_change_the_signature(a, b):
    assert normalise_message(a) == normalise_message(b)
    assert signature(_f(a)) == signature(_f(b))


@pytest.mark.parametrize(
    "a, b",
    [
        ("assert 3 == 4", "AttributeError: x"),
        ("NameError: name 'z' is not defined", "TypeError: name 'z' is not defined"),
    ],
)
def test_different_failures_differ(a, b):
    assert signature(_f(a)) != signature(_f(b))


def test_signature_parts():
    sig = signature(_f("assert 3 == 4", nodeid="tests/t.py::test_a[1-2]"))
    assert sig == "assertion|AssertionError|assert <num> == <num>|tests/t.py::test_a[]"
    assert signature(_f("assert 5 == 6", nodeid="t.py::test_b")) != signature(_f("assert 5 == 6"))
