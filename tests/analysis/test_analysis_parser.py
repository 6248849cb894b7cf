"""Parser and Document tests: tolerant parsing and incremental re-parse equal to a full parse."""

from __future__ import annotations

import pytest

from agent_core.analysis.parser import Document, parse_python, syntax_errors
from agent_core.analysis.symbols import analyse
from agent_core.models import Position, Span

MODULE = '''import math


class Circle:
    """A circle."""

    def __init__(self, r):
        self.r = r

    def area(self):
        return math.pi * self.r ** 2


def unit():
    return Circle(1)
'''


def _span(l1: int, c1: int, l2: int, c2: int) -> Span:
    return Span(start=Position(line=l1, character=c1), end=Position(line=l2, character=c2))


@pytest.mark.parametrize(
    ("span", "new_text"),
    [
        (_span(10, 15, 10, 22), "2 * math.pi"),  # replace within a line
        (_span(13, 0, 13, 0), "@cached\n"),  # insert a decorator line
        (_span(6, 4, 8, 0), ""),  # delete a method header + body line
        (_span(3, 0, 3, 0), "class Square:\n    side = 'ü€'\n\n\n"),  # insert a class with non-ASCII
        (_span(14, 11, 14, 20), "Circle(1"),  # introduce a syntax error
        (_span(0, 0, 15, 0), "x = 1\n"),  # replace everything
    ],
)
def test_incremental_reparse_equals_full_parse(span, new_text):
    doc = Document(MODULE)
    doc.apply_change(span, new_text)
    full = parse_python(doc.text.encode("utf-8"))
    assert doc.sexp() == str(full.root_node)
    assert doc.version == 1


def test_a_sequence_of_edits_tracks_text_and_symbols():
    doc = Document(MODULE)
    doc.apply_change(_span(13, 4, 13, 8), "make_unit")
    doc.apply_change(_span(14, 11, 14, 17), "Circle")
    doc.apply_change(_span(15, 0, 15, 0), "\nasync def later():\n    return 2\n")
    assert "def make_unit():" in doc.text
    names = [s.qualname for s in analyse(doc.source, doc.tree).symbols]
    assert names == ["Circle", "Circle.__init__", "Circle.area", "make_unit", "later"]
    assert doc.sexp() == str(parse_python(doc.source).root_node)


def test_whole_text_replacement_and_bad_range():
    doc = Document(MODULE)
    doc.apply_change(None, "def f(:\n")
    assert syntax_errors(doc.tree)
    with pytest.raises(ValueError):
        doc.apply_change(_span(0, 5, 0, 1), "x")


@pytest.mark.parametrize(
    ("source", "error_lines"),
    [
        (b"def ok():\n    return 1\n", []),
        (b"def f(:\n    pass\n", [0]),
        (b"x = (1,\ny = 2\n", [0]),
        (b"class A:\n    def m(self):\n        return [1, 2\n\ndef g():\n    return 3\n", [2]),
    ],
)
def test_syntax_errors_are_located(source, error_lines):
    found = sorted({line for line, _ in syntax_errors(parse_python(source))})
    assert found[: len(error_lines)] == error_lines
    assert bool(found) == bool(error_lines)
