"""Reading other tools' findings (testing/linters.py) and what counts against a candidate (pipeline/toolcheck.py)."""

from __future__ import annotations

import json
from collections import Counter
from pathlib import Path

import pytest

from agent_core.pipeline.deps import ToolBaseline
from agent_core.pipeline.toolcheck import _against
from agent_core.testing.linters import Finding, diagnostic_tools, is_tool_nodeid, parse_findings, pointed_at

ROOT = Path("/w")


@pytest.mark.parametrize(
    "diagnostic, tools",
    [
        ("[Ruff] line 1: `os` imported but unused", ["ruff"]),
        ("[Pylance] line 3: x is not defined", []),
        ("[pyright] line 3: Cannot access attribute", ["pyright"]),
        ("[mypy] line 2: Incompatible return value type", ["mypy"]),
        ("[flake8] line 2: F401 'os' imported but unused", ["flake8"]),
        ("line 4: AssertionError", []),
    ],
)
def test_the_diagnostic_source_names_the_tool(diagnostic, tools):
    assert diagnostic_tools([diagnostic]) == tools


RUFF_OUT = json.dumps(
    [
        {
            "code": "F401",
            "message": "`os` imported but unused",
            "filename": "/w/pkg/calc.py",
            "location": {"row": 1, "column": 8},
        }
    ]
)
PYRIGHT_OUT = json.dumps(
    {
        "generalDiagnostics": [
            {
                "file": "/w/calc.py",
                "severity": "error",
                "message": '"x" is not defined',
                "rule": "reportUndefinedVariable",
                "range": {"start": {"line": 4, "character": 0}, "end": {"line": 4, "character": 1}},
            },
            {"file": "/w/calc.py", "severity": "warning", "message": "unused", "range": {"start": {"line": 0}}},
        ]
    }
)


@pytest.mark.parametrize(
    "tool, output, expected",
    [
        ("ruff", RUFF_OUT, [Finding("ruff", "pkg/calc.py", 1, "F401", "`os` imported but unused")]),
        ("ruff", "[]", []),
        (
            "flake8",
            "calc.py:1:1: F401 'os' imported but unused\n",
            [Finding("flake8", "calc.py", 1, "F401", "'os' imported but unused")],
        ),
        (
            "mypy",
            (
                'calc.py:3: error: Incompatible return value type (got "str", expected "int")  [return-value]\n'
                "calc.py:3: note: see the docs\n"
            ),
            [
                Finding(
                    "mypy", "calc.py", 3, "return-value", 'Incompatible return value type (got "str", expected "int")'
                )
            ],
        ),
        ("pyright", PYRIGHT_OUT, [Finding("pyright", "calc.py", 5, "reportUndefinedVariable", '"x" is not defined')]),
    ],
)
def test_each_tools_output_is_read(tool, output, expected):
    assert parse_findings(tool, output, ROOT) == expected


@pytest.mark.parametrize("tool, output", [("ruff", "error: failed to parse"), ("pyright", "node not found")])
def test_output_that_is_not_the_tools_format_is_an_error_not_a_clean_file(tool, output):
    with pytest.raises(ValueError):
        parse_findings(tool, output, ROOT)


F401 = Finding("ruff", "calc.py", 1, "F401", "`os` imported but unused")
E711 = Finding("ruff", "calc.py", 7, "E711", "Comparison to `None` should be `cond is None`")


def test_only_the_pointed_at_finding_of_the_same_tool_is_targeted():
    assert pointed_at(F401, ["[Ruff] line 1: `os` imported but unused"])
    assert pointed_at(F401, ["[ruff] line 1: F401"])
    assert not pointed_at(F401, ["[mypy] line 1: `os` imported but unused"])
    assert not pointed_at(E711, ["[Ruff] line 1: `os` imported but unused"])


@pytest.mark.parametrize(
    "after, counted",
    [
        ([F401, E711], [F401]),  # the pointed-at finding is still there
        ([E711], []),  # gone; the other one was there before
        (
            [E711, Finding("ruff", "calc.py", 9, "E711", E711.message)],
            [Finding("ruff", "calc.py", 9, "E711", E711.message)],
        ),
        ([Finding("ruff", "other.py", 2, "F841", "unused")], []),  # a file the baseline did not check
    ],
)
def test_what_counts_against_a_candidate(after, counted):
    before = ToolBaseline(counts=Counter([F401.key, E711.key]), files={"calc.py"}, targeted=Counter([F401.key]))
    assert _against(after, before) == counted


def test_tool_failures_are_never_pytest_node_ids():
    assert is_tool_nodeid("ruff::calc.py::F401") and not is_tool_nodeid("tests/test_calc.py::test_add")
