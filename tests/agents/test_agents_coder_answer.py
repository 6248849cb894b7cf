"""The coder answers with fenced code (complete functions) or JSON edits; both become edits."""

from __future__ import annotations

import json
from pathlib import Path

from agent_core.agents.coder.answer import parse_coder_answer
from agent_core.agents.coder.schema import CoderOutput, Edit
from engine_support import BUGGY_CALC

FENCED = ("The bug is in add.\n\n### calc.py\n```python\ndef add(a, b):\n    return a + b\n```\n"
          "This makes the test pass.")


def test_a_block_under_a_file_header_is_an_edit_of_that_file():
    assert parse_coder_answer(FENCED, "other.py") == CoderOutput(
        edits=[Edit(path="calc.py", search="", replace="def add(a, b):\n    return a + b\n")])


def test_a_block_without_a_header_goes_to_the_default_file_and_json_edits_still_work():
    out = parse_coder_answer("```py\nX = 1\n```\n\n`pkg/m.py`:\n```python\ny = 2\n```", "calc.py")
    assert [(e.path, e.replace) for e in out.edits] == [("calc.py", "X = 1\n"), ("pkg/m.py", "y = 2\n")]
    edits = {"edits": [{"path": "calc.py", "search": "a - b", "replace": "a + b"}]}
    assert parse_coder_answer(json.dumps(edits), "x.py") == CoderOutput.model_validate(edits)


def test_an_answer_with_no_code_is_none():
    assert parse_coder_answer("I think the bug is in add.", "calc.py") is None
    assert parse_coder_answer('{"edits": []}', "calc.py") is None


def test_fix_with_a_fenced_whole_function_answer(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", FENCED)  # a raw text answer over the real wire protocol

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 1, run.stderr
    assert (project / "calc.py").read_text() == BUGGY_CALC["calc.py"].replace("a - b", "a + b")
    (request,) = scripted_llm.requests_for("coder")
    assert "response_format" not in request, "code answers are plain text, not a JSON mode"
    assert 256 < request["max_tokens"] < 1024, "capped by the size of the code shown"
    assert "complete, in a ```python block" in request["messages"][1]["content"]


def test_an_answer_without_code_costs_an_iteration_not_the_run(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", "Change the minus to a plus.")
    scripted_llm.add("coder", FENCED)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 2, run.stderr
    second = scripted_llm.requests_for("coder")[1]["messages"][1]["content"]
    assert "the answer held no ```python block and no JSON edits" in second


def test_a_file_header_written_inside_the_block_names_the_file_and_is_dropped():
    out = parse_coder_answer("```python\n### pkg/calc.py\ndef add(a, b):\n    return a + b\n```", "other.py")
    assert [(e.path, e.replace) for e in out.edits] == [("pkg/calc.py", "def add(a, b):\n    return a + b\n")]


def test_a_fence_opened_or_closed_twice_is_one_block():
    answer = ("### calc.py\n```python\n```python\ndef add(a, b):\n    return a + b\n```\n```\n\n"
              "The explanation is prose, not code.\n")
    out = parse_coder_answer(answer, "other.py")
    assert [(e.path, e.replace) for e in out.edits] == [("calc.py", "def add(a, b):\n    return a + b\n")]


MISHEADED = ("### test_calc.py (a test: the specification, do not edit)\n"
             "```python\ndef add(a, b):\n    return a + b\n```\n")


def test_code_of_the_module_under_a_copied_test_header_goes_to_the_module(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", MISHEADED)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 1, run.stderr
    assert (project / "calc.py").read_text() == BUGGY_CALC["calc.py"].replace("a - b", "a + b")
    assert (project / "test_calc.py").read_text() == BUGGY_CALC["test_calc.py"]


def test_a_test_rewritten_under_its_own_header_is_still_refused(project: Path, scripted_llm, run_fix):
    scripted_llm.add("coder", "### test_calc.py\n```python\ndef test_add():\n    pass  # the test gutted\n```\n")
    scripted_llm.add("coder", FENCED)

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0 and run.json["status"] == "fixed" and run.json["iterations"] == 2, run.stderr
    assert (project / "test_calc.py").read_text() == BUGGY_CALC["test_calc.py"]
    second = scripted_llm.requests_for("coder")[1]["messages"][1]["content"]
    assert "change the code under test, not the test file" in second


def test_several_files_in_one_block_with_a_nested_opener_are_split_by_their_headers():
    convert = "def f_to_c(f):\n    return (f - 32) * 5 / 9\n"
    answer = ('```python\n### thermo/__init__.py\n"""Conversions."""\n\n'
              f"### thermo/convert.py\n```python\n{convert}```\n")
    out = parse_coder_answer(answer, "other.py")
    assert [(e.path, e.replace) for e in out.edits] == [
        ("thermo/__init__.py", '"""Conversions."""\n\n'), ("thermo/convert.py", convert)]


def test_a_block_closed_at_the_end_of_a_code_line_is_still_read():
    out = parse_coder_answer("### calc.py\n```python\ndef add(a, b):\n    return a + b```", "other.py")
    assert [(e.path, e.replace) for e in out.edits] == [("calc.py", "def add(a, b):\n    return a + b")]


def test_an_outline_copied_back_is_no_edit_and_the_rewritten_function_still_is():
    answer = (
        "### pkg/utils.py (outline: the other definitions of this 374-line file, bodies not shown)\n"
        "```python\nclass _Missing:\n    def __bool__(self):\ndef is_generator(obj) -> bool:  # True for generators\n"
        "def from_timestamp(value):  # shown whole below\n```\n\n"
        "### pkg/utils.py\n```python\ndef from_timestamp(value):\n    return float(value)\n```\n"
    )
    output = parse_coder_answer(answer, "pkg/utils.py")
    assert output is not None
    assert [(e.path, e.replace) for e in output.edits] == [
        ("pkg/utils.py", "def from_timestamp(value):\n    return float(value)\n")]
    one_liner = "```python\nclass A:\n    def f(self): return 1\n```\n"
    assert parse_coder_answer(one_liner, "a.py").edits[0].replace.startswith("class A:"), "a real class is kept"
