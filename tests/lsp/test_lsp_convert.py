"""Unit tables for lsp_server.convert: positions, edits, diagnostics (no I/O)."""

from __future__ import annotations

from pathlib import Path

import pytest
from lsprotocol import types as lsp

from agent_core import models
from agent_core.models import ChangeSet, FileChange, Position, Span, TextEdit
from lsp_server import convert

ROOT = Path("/ws")


@pytest.mark.parametrize(
    "line, column, encoding, expected",
    [
        ("abc", 2, "utf-16", 2),
        ("a😀b", 2, "utf-16", 3),  # the emoji is two UTF-16 units
        ("a😀b", 2, "utf-8", 5),
        ("a😀b", 2, "utf-32", 2),
        ("é=1", 1, "utf-8", 2),
        ("", 0, "utf-16", 0),
    ],
)
def test_code_points_to_client_units_and_back(line, column, encoding, expected):
    assert convert.to_lsp_character(line, column, encoding) == expected
    assert convert.from_lsp_character(line, expected, encoding) == column


def test_client_column_past_the_line_is_clamped():
    assert convert.from_lsp_character("ab", 10) == 2


@pytest.mark.parametrize(
    "text, end, expected",
    [
        ("a\nbc", (1, 99), (1, 2)),  # the last line, no newline: its end (pygls' codec alone gives 1)
        ("a\nbc\n", (1, 99), (1, 2)),
        ("a\n😀b", (1, 1), (1, 1)),  # a column inside the surrogate pair lands after the character
        ("a\n😀b", (1, 3), (1, 2)),
    ],
)
def test_range_to_span_clamps_each_end_to_its_line(text, end, expected):
    rng = lsp.Range(start=lsp.Position(0, 0), end=lsp.Position(*end))
    span = convert.range_to_span(rng, text)
    assert (span.end.line, span.end.character) == expected
    assert (rng.end.line, rng.end.character) == end, "the client's range was changed"


def test_span_to_range_converts_each_end_on_its_own_line():
    text = "x = '😀'\ny = 1\n"
    span = Span(start=Position(line=0, character=6), end=Position(line=1, character=1))
    rng = convert.span_to_range(span, text)
    assert (rng.start.line, rng.start.character, rng.end.line, rng.end.character) == (0, 7, 1, 1)
    assert convert.range_to_span(rng, text) == span


@pytest.mark.parametrize(
    "a, b, touch",
    [
        (((0, 0), (0, 5)), ((0, 5), (0, 9)), True),
        (((0, 0), (0, 4)), ((0, 5), (0, 9)), False),
        (((2, 0), (2, 0)), ((1, 0), (3, 0)), True),
        (((4, 0), (4, 1)), ((1, 0), (3, 9)), False),
    ],
)
def test_ranges_touch(a, b, touch):
    def rng(r):
        return lsp.Range(start=lsp.Position(*r[0]), end=lsp.Position(*r[1]))

    assert convert.ranges_touch(rng(a), rng(b)) is touch


def _change_set() -> ChangeSet:
    edit = TextEdit(span=Span(start=Position(line=1, character=11), end=Position(line=1, character=12)), new_text="+")
    return ChangeSet(
        changes=[
            FileChange(path="calc.py", kind="modify", original="def add(a, b):\n    return a - b\n",
                       new="def add(a, b):\n    return a + b\n", edits=[edit]),
            FileChange(path="tests/test_new.py", kind="create", new="def test_x():\n    assert [] == []\n"),
        ]
    )


def test_change_set_becomes_versioned_document_changes_with_minimal_ranges():
    edit = convert.change_set_to_workspace_edit(_change_set(), ROOT, {"calc.py": 7})
    modify, create, insert = edit.document_changes
    assert modify.text_document == lsp.OptionalVersionedTextDocumentIdentifier(uri="file:///ws/calc.py", version=7)
    assert [(e.range.start.line, e.range.start.character, e.range.end.character, e.new_text) for e in modify.edits] == [
        (1, 11, 12, "+")
    ]
    assert isinstance(create, lsp.CreateFile) and create.uri == "file:///ws/tests/test_new.py"
    assert insert.text_document.version is None
    assert insert.edits[0].new_text.startswith("def test_x")
    assert edit.changes is None


def test_closed_file_gets_a_null_version():
    edit = convert.change_set_to_workspace_edit(_change_set(), ROOT, {})
    assert edit.document_changes[0].text_document.version is None


def test_without_document_changes_the_edits_go_into_changes():
    edit = convert.change_set_to_workspace_edit(_change_set(), ROOT, {"calc.py": 7}, document_changes=False)
    assert edit.document_changes is None
    assert set(edit.changes) == {"file:///ws/calc.py", "file:///ws/tests/test_new.py"}
    assert edit.changes["file:///ws/calc.py"][0].new_text == "+"


def _report() -> models.TestReport:
    failure = models.TestFailure(
        nodeid="tests/test_calc.py::test_add", file="tests/test_calc.py", line=4, message="assert -1 == 3",
        source_file="calc.py", source_line=2,
    )
    return models.TestReport(failed=1, failures=[failure])


def test_failing_test_gives_linked_diagnostics_on_test_line_and_source_line():
    lines = {("tests/test_calc.py", 3): "    assert add(1, 2) == 3", ("calc.py", 1): "    return a - b"}
    by_uri = convert.report_to_diagnostics(_report(), ROOT, lambda f, i: lines.get((f, i), ""))
    (test_diag,) = by_uri["file:///ws/tests/test_calc.py"]
    (src_diag,) = by_uri["file:///ws/calc.py"]
    assert (test_diag.range.start.line, test_diag.range.start.character, test_diag.range.end.character) == (3, 4, 25)
    assert src_diag.range.start.line == 1
    for diag in (test_diag, src_diag):
        assert diag.source == "agentls" and diag.code == "tests/test_calc.py::test_add"
        assert diag.severity == lsp.DiagnosticSeverity.Error
    assert test_diag.related_information[0].location.uri == "file:///ws/calc.py"
    assert src_diag.related_information[0].location.range == test_diag.range


def test_passing_report_gives_no_diagnostics():
    assert convert.report_to_diagnostics(models.TestReport(passed=3), ROOT, lambda f, i: "") == {}


def test_relative_path_refuses_files_outside_the_workspace(tmp_path):
    inside = convert.path_to_uri(tmp_path / "pkg" / "a.py")
    assert convert.relative_path(inside, tmp_path) == "pkg/a.py"
    assert convert.relative_path("file:///elsewhere/a.py", tmp_path) is None


def test_encoding_name_reads_the_enum_value():
    assert convert.encoding_name(lsp.PositionEncodingKind.Utf8) == "utf-8"
    assert convert.encoding_name(None) == "utf-16"


@pytest.mark.parametrize("line, expected", [(1, "add"), (5, "mul"), (3, None)])
def test_a_cursor_names_its_enclosing_function(line, expected):
    from lsp_server.commands import _enclosing_symbol

    text = "def add(a, b):\n    return a + c\n\n\ndef mul(a, b):\n    return a * b\n"
    cursor = Span(start=Position(line=line, character=0), end=Position(line=line, character=0))
    assert _enclosing_symbol(text, cursor) == expected
