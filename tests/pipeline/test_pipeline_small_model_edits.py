"""What small local models get wrong, handled before anything reaches the tests.

Measured on the bundled 1.5B model: whole files wrapped in ``` fences, edits
to the failing test instead of the code, whole-file rewrites that do not
parse, and prompts swamped by parametrized failures.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.agents.coder.schema import CoderOutput, Edit
from agent_core.agents.reflector.signatures import failure_text
from agent_core.models import TestFailure, TestReport
from agent_core.pipeline.coder.edits import apply_edits, strip_fences
from agent_core.workspace.shadow import ShadowWorkspace
from agent_core.workspace.tools import FileTools

SOURCE = "def add(a, b):\n    return a - b\n"
TEST = "from calc import add\n\n\ndef test_add():\n    assert add(2, 3) == 5\n"


@pytest.fixture
def tools(tmp_path: Path):
    (tmp_path / "calc.py").write_text(SOURCE)
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_calc.py").write_text(TEST)
    with ShadowWorkspace(tmp_path) as shadow:
        yield FileTools(shadow), shadow


@pytest.mark.parametrize("text, expected", [
    ("```python\nx = 1\n```", "x = 1\n"),
    ("```\nx = 1\n```\n", "x = 1\n"),
    ("x = 1\n", "x = 1\n"),
    ("  ```py  \nx = 1\n", "x = 1\n"),
    ("print('```')\n", "print('```')\n"),
])
def test_fences_are_stripped(text: str, expected: str):
    assert strip_fences(text) == expected


def test_fenced_search_and_replace_still_apply(tools):
    ft, shadow = tools
    out = CoderOutput(edits=[Edit(path="calc.py", search="```python\n    return a - b\n```",
                                  replace="```python\n    return a + b\n```")])
    assert apply_edits(ft, out) == (1, [])
    assert shadow.current("calc.py") == "def add(a, b):\n    return a + b\n"


def test_test_files_are_protected_only_when_asked(tools):
    ft, shadow = tools
    out = CoderOutput(edits=[Edit(path="tests/test_calc.py", search="== 5", replace="== -1")])
    applied, errors = apply_edits(ft, out, protect_tests=True)
    assert applied == 0 and "change the code under test" in errors[0]
    assert shadow.current("tests/test_calc.py") == TEST
    assert apply_edits(ft, out, protect_tests=False)[0] == 1


@pytest.mark.parametrize("echo", [
    Edit(path="tests/test_calc.py", search="", replace=f"```python\n{TEST}```"),
    Edit(path="tests/test_calc.py", search="", replace="def test_add():\n    assert add(2, 3) == 5\n"),
    Edit(path="tests/test_calc.py", search="assert add(2, 3) == 5", replace="assert add(2, 3) == 5"),
], ids=["whole-file", "one-test", "same-search-and-replace"])
def test_a_test_file_handed_back_as_shown_is_no_edit_not_a_refusal(tools, echo: Edit):
    ft, shadow = tools
    fix = Edit(path="calc.py", search="    return a - b", replace="    return a + b")
    assert apply_edits(ft, CoderOutput(edits=[echo, fix]), protect_tests=True) == (1, [])
    assert shadow.current("calc.py") == "def add(a, b):\n    return a + b\n"
    applied, errors = apply_edits(ft, CoderOutput(edits=[echo]), protect_tests=True)
    assert (applied, errors) == (0, ["- the answer gave the code back unchanged; change the lines that are wrong"])
    assert shadow.current("tests/test_calc.py") == TEST


def test_whole_file_write_that_does_not_parse_is_refused(tools):
    ft, shadow = tools
    bad = CoderOutput(edits=[Edit(path="calc.py", search="", replace="class X:\ndef add(a, b):\n  return a+b\n")])
    applied, errors = apply_edits(ft, bad)
    assert applied == 0 and "not valid Python" in errors[0]
    assert shadow.current("calc.py") == SOURCE
    good = CoderOutput(
        edits=[Edit(path="calc.py", search="", replace="```python\ndef add(a, b):\n    return a + b\n```")]
    )
    assert apply_edits(ft, good) == (1, [])
    assert shadow.current("calc.py") == "def add(a, b):\n    return a + b\n"


def test_failure_text_folds_parametrized_cases_and_keeps_the_essentials():
    tb = (
        "    def test_conv(c, f):\n        x = 1\n>       assert to_c(f) == c\nE       assert 35.5 == 0\n\n"
        "tests/test_conv.py:9: AssertionError"
    )
    failures = [
        TestFailure(
            nodeid=f"tests/test_conv.py::test_conv[{i}]",
            file="tests/test_conv.py",
            line=9,
            message="assert 35.5 == 0",
            traceback=tb,
        )
        for i in range(4)
    ]
    failures.append(
        TestFailure(
            nodeid="tests/test_conv.py::test_k",
            file="tests/test_conv.py",
            line=14,
            message="ValueError",
            traceback="E   ValueError: below zero",
        )
    )
    text = failure_text(TestReport(failed=5, failures=failures))
    assert text.count("FAILED") == 2
    assert "(and 3 more case(s) of this test)" in text
    assert ">       assert to_c(f) == c" in text and "E       assert 35.5 == 0" in text
    assert "x = 1" not in text  # the traceback's noise is gone
    assert "tests/test_conv.py::test_k at tests/test_conv.py:14" in text


MODULE = '''"""Temperatures."""

LIMIT = -273.15


def to_f(c):
    return c * 9 / 5 + 32


class Conv:
    @staticmethod
    def to_c(f):
        return (f + 32) * 5 / 9
'''


@pytest.mark.parametrize(
    "replacement, expected_piece",
    [
        ("def to_f(c):\n    return c * 1.8 + 32\n", "def to_f(c):\n    return c * 1.8 + 32\n\n\nclass Conv:"),
        (
            "    @staticmethod\n    def to_c(f):\n        return (f - 32) * 5 / 9\n",
            "class Conv:\n    @staticmethod\n    def to_c(f):\n        return (f - 32) * 5 / 9\n",
        ),
        (
            "@staticmethod\ndef to_c(f):\n    return (f - 32) * 5 / 9",
            "    def to_c(f):\n        return (f - 32) * 5 / 9\n",
        ),
    ],
)
def test_a_whole_function_without_search_replaces_that_function(tmp_path: Path, replacement, expected_piece):
    (tmp_path / "conv.py").write_text(MODULE)
    with ShadowWorkspace(tmp_path) as shadow:
        applied, errors = apply_edits(FileTools(shadow), CoderOutput(edits=[Edit(path="conv.py", replace=replacement)]))
        text = shadow.current("conv.py")
    assert (applied, errors) == (1, [])
    assert expected_piece in text and "LIMIT = -273.15" in text
    assert text.count("def to_c") == 1 and text.count("def to_f") == 1


def test_a_fragment_without_search_is_refused_not_written_over_the_file(tmp_path: Path):
    (tmp_path / "conv.py").write_text(MODULE)
    with ShadowWorkspace(tmp_path) as shadow:
        fragment = Edit(path="conv.py", replace="if c < -273.15:\n    raise ValueError('cold')\n")
        applied, errors = apply_edits(FileTools(shadow), CoderOutput(edits=[fragment]))
        assert applied == 0 and "drop Conv, to_c, to_f" in errors[0]
        assert shadow.current("conv.py") == MODULE
        new_file = Edit(path="extra.py", replace="X = 1\n")
        assert apply_edits(FileTools(shadow), CoderOutput(edits=[new_file])) == (1, [])
