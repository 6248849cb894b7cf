"""Tolerant parsing: a file with bad syntax still parses, and the rest of it is still read."""

from __future__ import annotations

import pytest

from agent_core.analysis.parser import parse_python
from agent_core.analysis.symbols import analyse


@pytest.mark.parametrize(
    ("source", "broken"),
    [
        (b"def ok():\n    return 1\n", False),
        (b"def f(:\n    pass\n", True),
        (b"x = (1,\ny = 2\n", True),
        (b"class A:\n    def m(self):\n        return [1, 2\n\ndef g():\n    return 3\n", True),
    ],
)
def test_parse_never_fails_and_marks_bad_syntax(source: bytes, broken: bool):
    assert parse_python(source).root_node.has_error is broken


@pytest.mark.parametrize(
    ("source", "names"),
    [
        (b"def f(:\n    pass\n\n\ndef g():\n    return 3\n", ["f", "g"]),
        (b"def ok():\n    return 1\n\nclass A:\n    def m(self):\n        return )\n\n\ndef g():\n    return 3\n",
         ["ok", "A", "A.m", "g"]),
    ],
)
def test_definitions_after_a_syntax_error_are_still_found(source: bytes, names: list[str]):
    assert [s.qualname for s in analyse(source).symbols] == names
