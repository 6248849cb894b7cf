"""A refusal the failing test trips, lifted, with the refused combination's value set (templates/refusals.py): the
candidates, their evidence (the crash at the refusal), and the search fixing a project the author's way
(`agentls fix`, a real sandbox, the scripted endpoint with no answer queued), where neither edit alone passes.

The case behind the template (bench/history_corpus):

click 8.1.4 (bench/history_corpus/click/multiple_flag_default): `Option.__init__` ended with

    if self.multiple and self.is_flag:
        raise TypeError("'multiple' is not valid with 'is_flag', use 'count'.")

and a test built `@click.option("-f", is_flag=True, multiple=True)`, expecting `()` as its default. The
author removed the refusal and, where a flag's default is set (`self.default = False`, under `if is_flag
and ...`), gave the combination its own value: `if multiple: self.default = () else: self.default =
False`.
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent_core.search.evidence.inputs import FailingInputs
from agent_core.search.templates.place import Place
from agent_core.search.templates.refusals import refusal_templates
from agent_core.search.templates.table import EVIDENCE_TIER, template_mutants
from engine_support import search_fixed

OPTIONS = (  # click 8.1.4's Option, in small: a flag that may not be multiple, and a flag's default of False
    "class Option:\n"
    "    def __init__(self, name, is_flag=False, multiple=False, default=None):\n"
    "        self.name = name\n"
    "        self.multiple = multiple\n"
    "        self.is_flag = is_flag\n"
    "        if is_flag and default is None:\n"
    "            self.default = False\n"
    "        else:\n"
    "            self.default = default\n"
    "\n"
    "        if self.multiple and self.is_flag:\n"
    "            raise TypeError(\"'multiple' is not valid with 'is_flag'\")\n"
    "\n"
    "    def value(self, given=None):\n"
    "        if given is None:\n"
    "            return tuple(self.default) if self.multiple else self.default\n"
    "        return tuple(given) if self.multiple else given\n"
)
AUTHORS = (OPTIONS.replace("            self.default = False\n",
                           "            if multiple:\n                self.default = ()\n"
                           "            else:\n                self.default = False\n")
           .replace("\n        if self.multiple and self.is_flag:\n"
                    "            raise TypeError(\"'multiple' is not valid with 'is_flag'\")\n", ""))
PROJECT = {
    "options.py": OPTIONS,
    "test_options.py": (
        "from options import Option\n\n\n"
        "def test_flag():\n    assert Option('v', is_flag=True).value() is False\n\n\n"
        "def test_multiple():\n    assert Option('n', multiple=True, default=[1]).value() == (1,)\n\n\n"
        "def test_given():\n    assert Option('n').value(3) == 3\n\n\n"
        "def test_multiple_flag_default():\n"
        "    assert Option('f', is_flag=True, multiple=True).value() == ()\n"
        "    assert Option('f', is_flag=True, multiple=True).value([True]) == (True,)\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}
RAISE = next(n for n, text in enumerate(OPTIONS.split("\n"), 1) if text.strip().startswith("raise"))


def _candidates(source: str, line: int, empties: tuple[str, ...] = ("()",)) -> list[tuple[str, str]]:
    lines = source.split("\n")
    place = Place(ast.parse(source), lines, line)
    assert place.statement is not None
    return [("\n".join([*lines[: e.first - 1], e.text, *lines[e.last:]]), e.description)
            for e in refusal_templates(lines, place.statement, place.function, empties)]


def test_the_refusal_is_lifted_and_the_value_set_where_the_other_parameter_is_tested_is_split():
    (split, why), (lifted, alone) = _candidates(OPTIONS, RAISE)
    assert split == AUTHORS
    assert "`self.default` set to () when `multiple`" in why
    assert lifted == OPTIONS.replace("        if self.multiple and self.is_flag:\n"
                                     "            raise TypeError(\"'multiple' is not valid with 'is_flag'\")\n", "")
    assert alone.endswith("lifted"), "the refusal alone, last"
    ast.parse(lifted)


def test_each_empty_value_the_failing_tests_write_is_a_candidate():
    made = [text for text, _ in _candidates(OPTIONS, RAISE, ("[]", "()"))]
    assert [("self.default = []" in m, "self.default = ()" in m) for m in made] == [
        (True, False), (False, True), (False, False)]


@pytest.mark.parametrize("source", [
    OPTIONS.replace("if self.multiple and self.is_flag:", "if self.multiple:"),  # one parameter: no combination
    # nothing is set under a test of `name`
    OPTIONS.replace("if self.multiple and self.is_flag:", "if self.multiple and self.name:"),
    OPTIONS.replace("            raise TypeError(\"'multiple' is not valid with 'is_flag'\")\n",
                    "            raise TypeError(\"'multiple' is not valid with 'is_flag'\")\n"
                    "        else:\n            pass\n"),  # an `if` with an `else`: not a refusal alone
])
def test_no_split_without_a_refused_combination(source: str):
    found = _candidates(source, RAISE)
    assert all("set to" not in why for _, why in found)


def test_only_a_crash_at_the_refusal_asks_for_it():
    at_crash = FailingInputs(crash_sites=(("options.py", RAISE),), empties=("()",))
    made = template_mutants("options.py", OPTIONS, RAISE, ["TypeError"], inputs=at_crash)
    lifted = [m for m in made if "refusal" in m.description]
    assert lifted and all(m.tier == EVIDENCE_TIER for m in lifted)
    elsewhere = FailingInputs(crash_sites=(("options.py", RAISE - 4),), empties=("()",))
    assert not [m for m in template_mutants("options.py", OPTIONS, RAISE, ["TypeError"], inputs=elsewhere)
                if "refusal" in m.description]


@pytest.mark.e2e
def test_the_search_lifts_the_refusal_and_gives_the_combination_its_value(tmp_path: Path, scripted_llm, run_fix,
                                                                          monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    project = tmp_path / "proj"
    found = search_fixed(project, PROJECT, run_fix, scripted_llm.base_url)

    assert "`self.default` set to () when `multiple`" in found["description"], found
    assert (project / "options.py").read_text() == AUTHORS
