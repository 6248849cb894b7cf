"""A parameter's default passed on as if the caller had set it (templates/sentinels.py): the candidates, and the search
fixing a project the author's way (`agentls fix`, a real sandbox, the scripted endpoint with no answer queued),
where each of the three edits alone leaves the failing test failing.

The case behind the template (bench/history_corpus):

marshmallow 3.21.1 (bench/history_corpus/marshmallow/nested_partial_default): `Schema._deserialize`
passed its `partial` on to every nested schema (`d_kwargs["partial"] = partial`), and `partial`
defaulted to `False` there and in `Schema.__init__`. A nested schema built with `partial=("x",)`
had its own setting overridden by the outer schema's default, which nobody chose. The author made the
default `None` (the parameter's annotation gained `| None`) in both signatures and passed the value on
only when it is not `None` (`else:` became `elif partial is not None:`).
"""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from agent_core.search.templates.place import Place
from agent_core.search.templates.sentinels import sentinel_templates
from engine_support import search_fixed

SCHEMA = (  # marshmallow 3.20's Schema, in small: a nested schema's own `partial` overridden by the outer default
    "from __future__ import annotations\n\n\n"
    "class Schema:\n"
    "    fields: dict = {}\n\n"
    "    def __init__(self, partial: bool | tuple = False, many: bool = False):\n"
    "        self.partial = partial\n        self.many = many\n\n"
    "    def load(self, data, partial=None):\n"
    "        if partial is None:\n            partial = self.partial\n"
    "        return self._deserialize(data, partial=partial)\n\n"
    "    def _deserialize(self, data, partial=False):\n"
    "        out = {}\n"
    "        for name, field in self.fields.items():\n"
    "            kwargs = {}\n"
    "            if isinstance(partial, tuple):\n"
    "                kwargs['partial'] = tuple(p.split('.', 1)[1] for p in partial if p.startswith(name + '.'))\n"
    "            else:\n"
    "                kwargs['partial'] = partial\n"
    "            if name in data:\n                out[name] = field.deserialize(data[name], **kwargs)\n"
    "            elif not (partial is True or isinstance(partial, tuple) and name in partial):\n"
    "                raise ValueError(f'missing {name}')\n"
    "        return out\n\n\n"
    "class Integer:\n    def deserialize(self, value, partial=None):\n        return int(value)\n\n\n"
    "class Nested:\n    def __init__(self, schema):\n        self.schema = schema\n\n"
    "    def deserialize(self, value, partial=None):\n        return self.schema.load(value, partial=partial)\n"
)
AUTHORS = (SCHEMA.replace("partial: bool | tuple = False", "partial: bool | tuple | None = None")
           .replace("def _deserialize(self, data, partial=False):", "def _deserialize(self, data, partial=None):")
           .replace("            else:\n                kwargs['partial'] = partial\n",
                    "            elif partial is not None:\n                kwargs['partial'] = partial\n"))
PROJECT = {
    "schema.py": SCHEMA,
    "test_schema.py": (
        "import pytest\n\nfrom schema import Integer, Nested, Schema\n\n\n"
        "class Inner(Schema):\n    fields = {'x': Integer(), 'y': Integer()}\n\n\n"
        "def test_load():\n    assert Inner().load({'x': '1', 'y': '2'}) == {'x': 1, 'y': 2}\n\n\n"
        "def test_missing():\n    with pytest.raises(ValueError):\n        Inner().load({'x': '1'})\n\n\n"
        "def test_partial_load():\n    assert Inner().load({'x': '1'}, partial=True) == {'x': 1}\n\n\n"
        "def test_nested_partial_default():\n"
        "    class Outer(Schema):\n        fields = {'z': Nested(Inner(partial=('x',)))}\n\n"
        "    assert Outer().load({'z': {'y': '4'}}) == {'z': {'y': 4}}\n"
        "    with pytest.raises(ValueError):\n        Outer().load({'z': {'x': '0'}})\n"
    ),
    ".agentls.toml": "[search]\nmutant_timeout_s = 2\n",
}


def _candidates(source: str, line_text: str) -> list[tuple[str, str]]:
    """(the source with the candidate made, its description) for the statement that starts with `line_text`."""
    lines = source.split("\n")
    line = next(i for i, text in enumerate(lines, 1) if text.strip().startswith(line_text))
    tree = ast.parse(source)
    place = Place(tree, lines, line)
    assert place.statement is not None
    out = []
    for e in sentinel_templates(tree, lines, place.statement, place.function):
        out.append(("\n".join([*lines[: e.first - 1], e.text, *lines[e.last:]]), e.description))
    return out


def test_the_default_becomes_none_along_the_chain_and_the_value_is_passed_on_only_when_given():
    found = _candidates(SCHEMA, "kwargs['partial'] = partial")
    assert len(found) == 2
    alone, chain = found
    assert "its function" in alone[1] and "2 functions of the module" in chain[1]
    assert chain[0] == AUTHORS, "both `False` defaults, the annotation's `| None`, and `elif partial is not None:`"
    assert "def _deserialize(self, data, partial=None):" in alone[0]
    assert "partial: bool | tuple = False" in alone[0], "the other function's default stays, in the first one"
    assert "def load(self, data, partial=None):" in alone[0], "a default that was None already is left as it is"


def test_a_statement_outside_an_else_is_put_under_an_if():
    source = "def send(target, retries=3):\n    options = {}\n    options['retries'] = retries\n    return options\n"
    (made, _), = _candidates(source, "options['retries'] = retries")
    assert made == ("def send(target, retries=None):\n    options = {}\n    if retries is not None:\n"
                    "        options['retries'] = retries\n    return options\n")
    ast.parse(made)


@pytest.mark.parametrize("source, line", [
    ("def f(a, b=None):\n    d = {}\n    d['b'] = b\n    return d\n", "d['b'] = b"),  # None already
    ("def f(a, b=False):\n    d = {}\n    d['b'] = not b\n    return d\n", "d['b'] = not b"),  # not the value as is
    ("def f(a, b=False):\n    c = b\n    return c\n", "c = b"),  # a local, not another object's setting
    ("def f(a, b):\n    d = {}\n    d['b'] = b\n    return d\n", "d['b'] = b"),  # no default
    ("class C:\n    def __init__(self, b=False):\n        self.b = b\n", "self.b = b"),  # stored, not passed on
    ("def f(a, b=False):\n    d = {}\n    d[a] = b\n    return d\n", "d[a] = b"),  # no setting's name
])
def test_no_candidate_where_nothing_is_passed_on_as_if_given(source: str, line: str):
    assert _candidates(source, line) == []


@pytest.mark.e2e
def test_the_search_passes_the_value_on_only_when_the_caller_gave_it(tmp_path: Path, scripted_llm, run_fix,
                                                                      monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("AGENTLS_SEARCH", "1")
    project = tmp_path / "proj"
    found = search_fixed(project, PROJECT, run_fix, scripted_llm.base_url)

    assert "`partial` passed on only when given" in found["description"], found
    assert (project / "schema.py").read_text() == AUTHORS
