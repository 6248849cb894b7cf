"""Applying coder edits: exact first, then forgiving only about whitespace, never guessing."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.pipeline.coder.edits import apply_edits, loose_match
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.tools import FileTools

SOURCE = "class A:\n    def f(self, x):\n        if x:\n            return x - 1\n        return 0\n"


@pytest.mark.parametrize(
    "search, replace, expected",
    [
        # the model dropped the indentation
        ("if x:\n    return x - 1", "if x:\n    return x + 1",
         SOURCE.replace("x - 1", "x + 1")),
        # trailing spaces in the search block
        ("            return x - 1   ", "            return x + 1", SOURCE.replace("x - 1", "x + 1")),
        # indented too deep by four
        ("                return x - 1", "                return x + 2", SOURCE.replace("x - 1", "x + 2")),
    ],
)
def test_whitespace_mismatches_are_forgiven(search, replace, expected):
    segment, new = loose_match(SOURCE, search, replace)
    assert SOURCE.replace(segment, new, 1) == expected


@pytest.mark.parametrize(
    "search",
    ["return y - 1", "return 0\nreturn 0", "", "   \n  "],
)
def test_no_or_ambiguous_match_is_not_guessed(search):
    assert loose_match(SOURCE + SOURCE.replace("x - 1", "y"), search, "z") is None


def test_apply_edits_reports_what_failed(tmp_path: Path):
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "m.py").write_text(SOURCE)
    with ShadowWorkspace(ws) as shadow:
        tools = FileTools(shadow)
        output = CoderOutput(edits=[
            Edit(path="m.py", search="if x:\n    return x - 1", replace="if x:\n    return x + 1"),
            Edit(path="m.py", search="return nothing", replace="x"),
            Edit(path="new.py", search="", replace="y = 1\n"),
        ])
        applied, errors = apply_edits(tools, output)
        assert applied == 2 and len(errors) == 1 and "not found" in errors[0]
        assert (shadow.root / "m.py").read_text() == SOURCE.replace("x - 1", "x + 1")
        assert (shadow.root / "new.py").read_text() == "y = 1\n"
        assert apply_edits(tools, CoderOutput(edits=[])) == (0, ["- the answer contained no edits"])


def test_relative_indentation_of_the_replacement_is_kept():
    segment, new = loose_match(SOURCE, "if x:\n    return x - 1", "if x:\n    return x + 1\nreturn -1")
    assert new == "        if x:\n            return x + 1\n        return -1\n"


LEAP = (
    '"""Calendar."""\n\n\ndef is_leap(year):\n    return year % 4 == 0 and (year % 100 == 0 or year % 400 == 0)\n\n\n'
    "def other():\n    return 1\n"
)


def _apply_one(tmp_path: Path, text: str, edit: Edit) -> tuple[int, list[str], str]:
    ws = tmp_path / "ws"
    ws.mkdir()
    (ws / "m.py").write_text(text)
    with ShadowWorkspace(ws) as shadow:
        applied, errors = apply_edits(FileTools(shadow), CoderOutput(edits=[edit]))
        return applied, errors, (shadow.root / "m.py").read_text()


def test_whole_function_in_replace_is_spliced_whatever_the_search(tmp_path: Path):
    # Seen with the 1.5B model: search holds the one changed line, replace the whole corrected function.
    fixed = "def is_leap(year):\n    return year % 4 == 0 and (year % 100 != 0 or year % 400 == 0)"
    edit = Edit(path="m.py", search="return year % 4 == 0 and (year % 100 == 0 or year % 400 == 0)", replace=fixed)
    applied, errors, text = _apply_one(tmp_path, LEAP, edit)
    assert (applied, errors) == (1, [])
    assert text == LEAP.replace("100 == 0", "100 != 0")


def test_two_functions_in_replace_are_both_spliced(tmp_path: Path):
    replace = "def other():\n    return 2\n\n\ndef is_leap(year):\n    return year % 400 == 0\n"
    applied, errors, text = _apply_one(tmp_path, LEAP, Edit(path="m.py", search="", replace=replace))
    assert (applied, errors) == (1, [])
    assert text == (
        '"""Calendar."""\n\n\ndef is_leap(year):\n    return year % 400 == 0\n\n\ndef other():\n    return 2\n'
    )


def test_an_edit_that_would_break_the_syntax_changes_nothing(tmp_path: Path):
    edit = Edit(path="m.py", search="return 1", replace="return (1")
    applied, errors, text = _apply_one(tmp_path, LEAP, edit)
    assert applied == 0 and text == LEAP
    assert errors == [
        "- m.py: the edit would leave m.py with a syntax error (line 9: '(' was never closed); nothing was changed"
    ]


def test_a_midline_match_is_reindented_when_the_exact_one_breaks_the_syntax(tmp_path: Path):
    # The exact substring match puts the replacement's second line at column 0; the line-wise one re-indents it.
    edit = Edit(path="m.py", search="return 1", replace="x = 1\nreturn x")
    applied, errors, text = _apply_one(tmp_path, LEAP, edit)
    assert (applied, errors) == (1, [])
    assert text.endswith("def other():\n    x = 1\n    return x\n")


def test_a_header_in_search_keeps_the_edit_literal(tmp_path: Path):
    # A docstring added under the header: replace parses as a complete (docstring-only) function, but it is not one.
    edit = Edit(path="m.py", search="def other():\n", replace='def other():\n    """One."""\n')
    applied, errors, text = _apply_one(tmp_path, LEAP, edit)
    assert (applied, errors) == (1, [])
    assert text.endswith('def other():\n    """One."""\n    return 1\n')


def test_a_local_assignment_is_not_mistaken_for_the_module_constant(tmp_path: Path):
    text = "total = 0\n\n\ndef f():\n    total = 1\n    return total\n"
    edit = Edit(path="m.py", search="    total = 1", replace="    total = 2")
    applied, errors, new = _apply_one(tmp_path, text, edit)
    assert (applied, errors, new) == (1, [], text.replace("total = 1", "total = 2"))


@pytest.mark.parametrize(
    "answer, expected",
    [
        # a module constant, alone
        (
            "ABSOLUTE_ZERO = -273.15",
            '"""Physics."""\nimport math\n\nABSOLUTE_ZERO = -273.15\n\n\ndef ok(c):\n    return c >= ABSOLUTE_ZERO\n',
        ),
        # a new import goes after the last import; a new helper at the end; a test written along is dropped
        (
            "import sys\n\ndef ok(c):\n    return _above(c)\n\ndef _above(c):\n    return c >= ABSOLUTE_ZERO\n\n"
            "def test_ok():\n    assert ok(1)\n",
            '"""Physics."""\nimport math\nimport sys\n\nABSOLUTE_ZERO = -237.15\n\n\ndef ok(c):\n    return _above(c)\n'
            "\n\ndef _above(c):\n    return c >= ABSOLUTE_ZERO\n",
        ),
    ],
)
def test_whole_pieces_are_spliced_in_place(tmp_path: Path, answer: str, expected: str):
    text = '"""Physics."""\nimport math\n\nABSOLUTE_ZERO = -237.15\n\n\ndef ok(c):\n    return c >= ABSOLUTE_ZERO\n'
    applied, errors, new = _apply_one(tmp_path, text, Edit(path="m.py", search="", replace=answer))
    assert (applied, errors) == (1, [])
    assert new == expected


def test_code_handed_back_unchanged_is_no_edit(tmp_path: Path):
    edit = Edit(
        path="m.py",
        search="",
        replace="def is_leap(year):\n    return year % 4 == 0 and (year % 100 == 0 or year % 400 == 0)\n",
    )
    applied, errors, text = _apply_one(tmp_path, LEAP, edit)
    assert (applied, errors, text) == (
        0,
        ["- the answer gave the code back unchanged; change the lines that are wrong"],
        LEAP,
    )


UTILS = "def clean(text):\n    return text.strip()\n\n\ndef shout(text):\n    return text.upper()\n"


@pytest.mark.parametrize(
    ("replace", "lands_in_src", "refused"),
    [
        # the fixed function alone, under the bare file name: it goes to the module that defines it
        ("def clean(text):\n    return text.strip(' ')\n", True, False),
        # a function the module does not define, under its bare name: refused, no new file
        ("def whisper(text):\n    return text.lower()\n", False, True),
    ],
)
def test_a_new_module_named_like_a_source_module_is_never_created(tmp_path: Path, replace, lands_in_src, refused):
    ws = tmp_path / "ws"
    (ws / "src" / "pkg").mkdir(parents=True)
    (ws / "src" / "pkg" / "utils.py").write_text(UTILS)
    with ShadowWorkspace(ws) as shadow:
        applied, errors = apply_edits(FileTools(shadow), CoderOutput(edits=[Edit(path="utils.py", replace=replace)]),
                                      protect_tests=True, sources=["src/pkg/utils.py"])
        assert shadow.current("utils.py") is None, "no stray module at the root"
        assert (applied, bool(errors)) == (int(lands_in_src), refused), errors
        assert ("strip(' ')" in shadow.current("src/pkg/utils.py")) == lands_in_src
        if refused:
            assert "src/pkg/utils.py" in errors[0] and "do not create a new file" in errors[0]
