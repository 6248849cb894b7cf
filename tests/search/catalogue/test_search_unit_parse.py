"""A mutant's syntax is checked on its unit (the method, function or module-level statement around the line)
rather than on the whole module: the same mutants as the whole module's parse keeps, at a fraction of the cost."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.search.catalogue import line_mutants as lm

REPO = Path(__file__).resolve().parents[3]
MODULES = ["agent_core/search/infill/holes.py", "testkit/scripted_llm.py"]  # classes, decorators, methods, nested
# functions, module-level code
STEP = 3  # every third line: the module's parse per edit is what makes the reference slow


@pytest.mark.parametrize("rel", MODULES)
def test_the_unit_s_parse_keeps_what_the_module_s_parse_keeps(rel: str, monkeypatch: pytest.MonkeyPatch):
    source = (REPO / rel).read_text()
    count = source.count("\n") + 1
    by_unit = {line: lm.line_mutants(rel, source, line) for line in range(1, count + 1, STEP)}
    monkeypatch.setattr(lm, "_unit", lambda tree, line, count: (1, count))
    by_module = {line: lm.line_mutants(rel, source, line) for line in range(1, count + 1, STEP)}

    assert sum(map(len, by_module.values())) > 300, "a real module's catalogue"
    assert by_unit == by_module


def test_an_edit_that_breaks_the_syntax_of_a_method_is_dropped():
    source = "class A:\n    @property\n    def f(self):\n        return (1 +\n                2)\n\n\nx = A()\n"
    texts = [m.text for m in lm.line_mutants("a.py", source, 4)]
    assert texts and all(lm._parses(source.replace("        return (1 +", t, 1)) for t in texts)
    assert lm._unit(lm.pysyntax.parse(source), 4, 8) == (2, 5), "the method, its decorator included"
    assert lm._unit(lm.pysyntax.parse(source), 8, 8) == (8, 8)
