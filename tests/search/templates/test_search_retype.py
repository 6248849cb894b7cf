"""A type test that let the crashing value through, asked with `isinstance` (templates/retype.py): the candidates,
and the search fixing a project the author's way (`agentls fix`, a real sandbox, the scripted endpoint with
no answer queued), where the helper's own `return True` passed the suite too.

The case behind the template (bench/history_corpus):

Python-Markdown 3.5.2 (bench/history_corpus/markdown/inline_atomic_string): an inline processor that
returns an `AtomicString` crashed with `'AtomicString' object has no attribute 'text'` on
`node.text`, under `if not isString(node):`. `isString` says False for an `AtomicString` (a string the
parser must not touch), so the branch for elements took it. The author asked the question the branch
means, `if not isinstance(node, str):`, at that `if` and at the other one of the module that tells the
same value apart the same way. The single-edit search made `isString` return True instead: green, and
it changes every other caller of the helper (the legacy attributes extension skips atomic text by it).
"""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

import pytest

from agent_core.search.templates.place import Place
from agent_core.search.templates.retype import retyped_guards
from engine_support import journal_records, make_project

TEXTUTIL = (
    "class Atomic(str):\n    \"\"\"Text the renderer must leave as it is.\"\"\"\n\n\n"
    "def is_text(value):\n    \"\"\"A string the renderer may change: not an Atomic one.\"\"\"\n"
    "    if not isinstance(value, Atomic):\n        return isinstance(value, str)\n    return False\n\n\n"
    "def shout(values):\n    return [v.upper() if is_text(v) else v for v in values]\n"
)
RENDER = (  # Python-Markdown 3.5.2's treeprocessors, in small: two branches for elements that take an Atomic
    "from textutil import is_text\n\n\n"
    "def render(nodes):\n    out = []\n    for node in nodes:\n"
    "        if not is_text(node):  # an element\n            out.append(node.text.upper())\n"
    "        else:\n            out.append(node)\n    return ''.join(out)\n\n\n"
    "def count(nodes):\n    total = 0\n    for node in nodes:\n"
    "        if not is_text(node):\n            if node.text:\n                total += len(node.text)\n"
    "        else:\n            total += len(node)\n    return total\n"
)
PROJECT = {
    "textutil.py": TEXTUTIL,
    "render.py": RENDER,
    "test_render.py": (
        "from render import count, render\nfrom textutil import Atomic, shout\n\n\n"
        "class Node:\n    def __init__(self, text):\n        self.text = text\n\n\n"
        "def test_elements_and_text():\n    assert render([Node('a'), 'b']) == 'Ab'\n\n\n"
        "def test_atomic_text_is_kept():\n    assert render([Node('a'), Atomic('<b>')]) == 'A<b>'\n\n\n"
        "def test_atomic_text_counts():\n    assert count([Atomic('ab'), Node('c')]) == 3\n\n\n"
        "def test_shout():\n    assert shout(['a', 1]) == ['A', 1]\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}
AUTHORS = RENDER.replace("if not is_text(node):", "if not isinstance(node, str):")


def _candidates(root: Path, line_text: str, wrong: frozenset[tuple[str, str]]) -> list[tuple[int, int, str]]:
    source = (root / "render.py").read_text()
    lines = source.split("\n")
    line = next(i for i, text in enumerate(lines, 1) if line_text in text)
    tree = ast.parse(source)
    place = Place(tree, lines, line)
    assert place.statement is not None
    return [(e.first, e.last, e.text) for e in
            retyped_guards(tree, lines, place.statement, "render.py", wrong, root)]


def test_the_predicate_becomes_isinstance_of_the_builtin_the_crashing_class_derives_from(tmp_path: Path):
    root = make_project(tmp_path / "proj", PROJECT)
    wrong = frozenset({("Atomic", "text")})
    found = _candidates(root, "out.append(node.text.upper())", wrong)
    authors = AUTHORS.split("\n")
    first_if = authors.index("        if not isinstance(node, str):  # an element") + 1
    second_if = authors.index("        if not isinstance(node, str):") + 1
    assert found == [
        (first_if, second_if, "\n".join(authors[first_if - 1 : second_if])),  # both `if`s that ask it: first
        (first_if, first_if, authors[first_if - 1]),  # the crash's own `if` alone
    ]
    nested = _candidates(root, "total += len(node.text)", wrong)  # under `if node.text:`, itself no predicate
    assert nested[0] == found[0]


def test_no_candidate_without_the_evidence(tmp_path: Path):
    root = make_project(tmp_path / "proj", PROJECT)
    line = "out.append(node.text.upper())"
    assert _candidates(root, line, frozenset()) == []
    assert _candidates(root, line, frozenset({("Atomic", "value")})) == [], "another attribute than the line reads"
    assert _candidates(root, line, frozenset({("Opaque", "text")})) == [], "a class of no builtin base: no type"
    assert _candidates(root, line, frozenset({("bytes", "text")}))[0][2].count("isinstance(node, bytes)") == 2


@pytest.mark.e2e
def test_the_search_asks_the_type_where_the_helper_let_it_through(tmp_path: Path, scripted_llm, run_fix,
                                                                   monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    project = make_project(tmp_path / "proj", PROJECT)
    green_too = make_project(tmp_path / "other", {  # the single edit the search made before: green as well
        **PROJECT, "textutil.py": TEXTUTIL.replace("    return False\n", "    return True\n")})
    plain = subprocess.run([sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider"], cwd=green_too,
                           capture_output=True, text=True, timeout=120)
    assert plain.returncode == 0, plain.stdout

    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")

    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    assert (project / "render.py").read_text() == AUTHORS
    assert (project / "textutil.py").read_text() == TEXTUTIL, "the helper's other callers keep their answer"
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert "`is_text(node)` -> `isinstance(node, str)`" in search["found"]["description"]


def test_a_builtin_call_on_the_variable_is_no_predicate(tmp_path: Path):
    root = make_project(tmp_path / "proj", {**PROJECT, "render.py": RENDER.replace(
        "if not is_text(node):  # an element", "if type(node) is not str:  # an element")})
    found = _candidates(root, "out.append(node.text.upper())", frozenset({("Atomic", "text")}))
    assert found == [], "`type(node)` is not a helper that let the value through"
