"""A case the code forgot, found by the search (evidence/inputs.py): a literal set of characters widened with one the
failing test uses. `agentls fix` on a real project, a real sandbox, the scripted endpoint with no answer queued."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent_core.search.candidate import Edit
from agent_core.search.driver.ranking import templates_for
from agent_core.search.evidence.inputs import FailingInputs
from agent_core.search.templates.cases import widening_edits
from agent_core.search.templates.table import EVIDENCE_TIER, template_mutants
from engine_support import journal_records, make_project

QUOTES = {  # sqlparse 0.4.4's fix: backquoted names lose their quotes too
    "quotes.py": (
        "def remove_quotes(val):\n"
        "    if not val:\n"
        "        return val\n"
        "    if val[0] in ('\"', \"'\") and val[0] == val[-1]:\n"
        "        val = val[1:-1]\n"
        "    return val\n"
    ),
    "test_quotes.py": (
        "from quotes import remove_quotes\n\n\n"
        "def test_double():\n    assert remove_quotes('\"a\"') == 'a'\n\n\n"
        "def test_single():\n    assert remove_quotes(\"'a'\") == 'a'\n\n\n"
        "def test_backquotes():\n    assert remove_quotes('`a`') == 'a'\n\n\n"
        "def test_unquoted():\n    assert remove_quotes('a.b') == 'a.b'\n\n\n"
        "def test_unbalanced_or_unquoted_ends_stay():\n"
        "    assert remove_quotes(\"'a\") == \"'a\" and remove_quotes('aba') == 'aba'\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("    found = c in ('\"', \"'\")", "    found = c in ('\"', \"'\", '`')"),
        ("    ESCAPED = CONTROL | {'\"'}", "    ESCAPED = CONTROL | {'\"', '`'}"),
        ("    ok = c in ['é',]", "    ok = c in ['é', '`']"),  # columns are characters, ast's are bytes
    ],
)
def test_a_bracketed_literal_of_characters_is_widened(line: str, expected: str):
    nodes = list(ast.walk(ast.parse(line.strip())))
    for node in nodes:  # the line as parsed sits at column 0; the text keeps its indentation
        if hasattr(node, "col_offset"):
            node.col_offset += 4
            node.end_col_offset += 4
    assert widening_edits(line, nodes, 1, ["`"]) == [Edit(1, expected, 1, "'`' added to the literal collection")]


@pytest.mark.e2e
def test_a_missing_character_is_added_to_the_collection_by_the_search(tmp_path: Path, scripted_llm, run_fix,
                                                                       monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    project = make_project(tmp_path / "proj", QUOTES)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    authors = QUOTES["quotes.py"].replace("('\"', \"'\")", "('\"', \"'\", '`')")
    assert (project / "quotes.py").read_text() == authors, "the author's fix"
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"]["description"] == "'`' added to the literal collection"


def test_a_module_constant_the_function_reads_is_widened_at_its_definition():
    source = ("CONTROL = {chr(0)}\n_basic = CONTROL | {'\"'}\nUNUSED = ('x',)\n\n\n"
              "def escape(s, seqs=_basic):\n    return ''.join('\\\\' + c if c in seqs else c for c in s)\n")
    backslash = FailingInputs(characters=("\\",))
    found = [(m.line, m.text) for m in template_mutants("u.py", source, 7, [], None, (), backslash)
             if "literal collection" in m.description]
    assert found == [(2, "_basic = CONTROL | {'\"', '\\\\'}")], "the constant the default names, not another"


@pytest.mark.parametrize(
    ("line", "expected"),
    [
        ("    if token.value == 'CREATE':\n        pass", "    if token.value.upper() == 'CREATE':"),
        ("    found = name in ('a', 'b')", "    found = name.lower() in ('a', 'b')"),
        ("    found = a + b != 'X1'", "    found = (a + b).upper() != 'X1'"),
        ("    found = name == 'Mixed'", None),  # no single case to compare in
        ("    found = name == '42'", None),  # no letters
    ],
)
def test_a_comparison_with_a_literal_in_one_case_is_made_blind_to_case(line: str, expected: str | None):
    source = f"def f(token, name, a, b):\n{line}\n"
    found = [m.text for m in template_mutants("m.py", source, 2) if "compared as" in m.description]
    assert found == ([expected] if expected else [])


def test_a_widening_the_failing_test_asks_for_is_made_far_down_the_suspicious_lines():
    source = ("_basic = {'\"'}\n\n\ndef escape(s, seqs=_basic):\n"
              "    return ''.join('\\\\' + c if c in seqs else c for c in s)\n"
              "\n\ndef other(x):\n" + "".join(f"    x = x + {i}\n" for i in range(10)) + "    return x\n")
    ranked = [(1.0 - i / 100, "m.py", 9 + i) for i in range(10)] + [(0.1, "m.py", 5)]
    backslash = FailingInputs(characters=("\\",))
    found = [m for m in templates_for(Path("."), {"m.py": source}, ranked, [], backslash)
             if "literal collection" in m.description]
    assert [(m.line, m.text, m.tier) for m in found] == [(1, "_basic = {'\"', '\\\\'}", EVIDENCE_TIER)], (
        "line 5 is the 11th suspicious line")
