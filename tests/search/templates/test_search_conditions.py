"""A condition swapped for another the function already tests (search/templates/conditions.py): the candidates, and the
search fixing a project with one (`agentls fix`, a real sandbox, the scripted endpoint with no answer queued).

The case behind the template (bench/history_corpus):

tomlkit 0.11.5 replaced `if item.name != key.key:` (which held for a nested table's dotted name as well)
by `if not self._parsed:`, a test the same method makes three lines further down. In tomlkit's `append`
both `if self._body:` and `if not self._parsed:` passed the suite: `_parsed` is set only from
`parsed: bool = False` and `parsing: bool`, and the function tests it only under a `not`
(`not (self._parsed or ...)`, `not self._parsed`), while `_body` is a list.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent_core.search.templates.conditions import MAX_CONDITIONS, condition_swaps
from agent_core.search.templates.place import Place
from engine_support import journal_records, make_project

CONTAINER = {  # tomlkit 0.11.5's fix, in small: `if item.name != key:` became `if not self.parsed:`
    "container.py": (
        "class Container:\n"
        "    def __init__(self, parsed=False):\n"
        "        self.parsed = parsed\n"
        "        self.body = []\n\n"
        "    def append(self, key, item):\n"
        "        if item.name is None:\n"
        "            item.name = key\n"
        "        if item.name != key:\n"
        "            item.display = None\n"
        "        if self.body and not self.parsed:\n"
        "            item.indent = '\\n'\n"
        "        self.body.append((key, item))\n"
        "        return self\n"
    ),
    "test_container.py": (
        "from container import Container\n\n\n"
        "class Item:\n"
        "    def __init__(self, name=None, display=None):\n"
        "        self.name, self.display, self.indent = name, display, ''\n\n\n"
        "def test_a_new_item_loses_its_display_name():\n"
        "    item = Item('a', display='a.b')\n"
        "    Container().append('a', item)\n"
        "    assert item.display is None\n\n\n"
        "def test_a_parsed_item_keeps_its_display_name():\n"
        "    item = Item('b', display='x.b')\n"
        "    Container(parsed=True).append('c', item)\n"
        "    assert item.display == 'x.b'\n\n\n"
        "def test_a_new_item_under_another_key_loses_it_too():\n"
        "    item = Item('z', display='a.z')\n"
        "    Container().append('y', item)\n"
        "    assert item.display is None\n\n\n"
        "def test_a_parsed_item_under_its_own_name_keeps_it_too():\n"
        "    item = Item('c', display='x.c')\n"
        "    Container(parsed=True).append('c', item)\n"
        "    assert item.display == 'x.c'\n\n\n"
        "def test_the_second_item_is_indented():\n"
        "    box = Container().append('a', Item()).append('b', Item())\n"
        "    assert [i.indent for _, i in box.body] == ['', '\\n']\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}


def _swaps(source: str, needle: str) -> list[str]:
    lines = source.split("\n")
    line = next(i for i, text in enumerate(lines, 1) if needle in text)
    tree = ast.parse(source)
    place = Place(tree, lines, line)
    return [e.text.strip() for e in condition_swaps(lines, place.statement, place.function, tree)]


def test_the_functions_other_tests_come_in_both_senses_single_ones_and_the_nearest_first():
    source = ("def f(items, limit, flag):\n"
              "    total = [x for x in items if x.ok]\n"  # x is bound only in the comprehension
              "    if items and limit > 3:\n"
              "        pass\n"
              "    if total == limit:\n"
              "        return total\n"
              "    while not flag.done:\n"
              "        flag.step()\n")
    assert _swaps(source, "if total == limit") == [
        "if items:", "if not items:", "if limit > 3:", "if not (limit > 3):", "if not flag.done:", "if flag.done:",
        "if items and limit > 3:", "if not (items and limit > 3):",
    ], "never `x.ok`; a whole `and` after its parts; `flag.done` negated first, as the function tests it"
    assert _swaps("def g(a):\n    x = a\n    return x\n", "x = a") == [], "not an `if`"


def test_a_flag_of_the_module_comes_before_a_nearer_test_in_the_sense_the_function_tests_it():
    # tomlkit 0.11.5's `append`: `if self._body:` and `if not self._parsed:` both passed its suite
    source = ("class Container:\n"
              "    def __init__(self, parsed: bool = False):\n"
              "        self._parsed = parsed\n"
              "        self._body = []\n\n"
              "    def parsing(self, on):\n"
              "        self._parsed = not on\n\n"
              "    def append(self, key, item, prev_ws):\n"
              "        if item.name != key:\n"
              "            item.invalidate()\n"
              "        if self._body and not (self._parsed or prev_ws):\n"
              "            item.indent = '\\n'\n")
    assert _swaps(source, "if item.name != key")[:4] == [
        "if not self._parsed:", "if self._parsed:", "if self._body:", "if not self._body:"]
    restored = source.replace("self._parsed = not on", "self._parsed = on[2]")  # a kind that cannot be told
    assert _swaps(restored, "if item.name != key")[0] == "if not self._parsed:"
    unflagged = source.replace("self._parsed = not on", "self._parsed = 0")  # a number too: no flag
    assert _swaps(unflagged, "if item.name != key")[:2] == ["if self._body:", "if not self._body:"]


def test_at_most_max_conditions_are_taken():
    tests = "".join(f"    if a{i}:\n        pass\n" for i in range(MAX_CONDITIONS + 3))
    source = f"def f({', '.join(f'a{i}' for i in range(MAX_CONDITIONS + 3))}, b):\n{tests}    if b:\n        pass\n"
    assert len(_swaps(source, "if b:")) == 2 * MAX_CONDITIONS


@pytest.mark.e2e
def test_the_search_swaps_in_the_condition_the_author_chose(tmp_path: Path, scripted_llm, run_fix,
                                                             monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    project = make_project(tmp_path / "proj", CONTAINER)
    run = run_fix(str(project), "--base-url", scripted_llm.base_url, "--json", "--apply")
    assert run.code == 0, run.stderr
    assert run.json["status"] == "fixed" and run.json["usage"]["llm_calls"] == 0, run.json
    authors = CONTAINER["container.py"].replace("if item.name != key:", "if not self.parsed:")
    assert (project / "container.py").read_text() == authors
    search = next(r for r in journal_records(project, run.json["run_id"]) if r["type"] == "search")
    assert search["found"]["description"] == "`item.name != key` -> `not self.parsed`, a test the function makes"
