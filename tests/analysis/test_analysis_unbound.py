"""Names read where nothing can have bound them (analysis/unbound.py): counted by Python's scope rules, and a
sample that adds one is no candidate."""

from __future__ import annotations

import pytest

from agent_core.analysis.unbound import UnboundCheck, unbound_reads
from agent_core.search.infill.holes import holes_at
from agent_core.search.infill.samples import Sampler


@pytest.mark.parametrize(("source", "count"), [
    ("import os\ndef f(a):\n    b = a\n    return os.path.join(b, str(len(a)))\n", 0),
    ("def f(a):\n    return a + made_up\n", 1),
    ("x = y + 1\n", 1),
    ("def f(t):\n    if t and token:\n        return 1\n    tidx, token = t.next()\n    return token\n", 1),
    ("def f():\n    r = helper()\n    def helper():\n        return 1\n    return r\n", 1),
    ("class C:\n    X = 1\n    def m(self):\n        return X\n", 1),
])
def test_reads_nothing_can_have_bound_are_counted(source, count):
    assert unbound_reads(source) == count


@pytest.mark.parametrize("source", [
    "def f(t):\n    for x in t:\n        if token:\n            pass\n        token = x\n",  # bound by an earlier turn
    "def f(t):\n    return [x for x in t if x]\n",
    "f = lambda a: a + b\nb = 1\n",
    "def f():\n    def g():\n        return v\n    v = 1\n    return g\n",  # a closure reads it when called
    "def f():\n    global G\n    G = 1\ndef g():\n    return G\n",
    "class C:\n    X = 1\n    Y = X + 1\n",
    "def f():\n    return g()\ndef g():\n    return 1\n",
    "def f():\n    try:\n        pass\n    except ValueError as e:\n        return e\n",
    "def f(t):\n    if any((y := x) for x in t):\n        return y\n",
    "def f(p):\n    with open(p) as fh:\n        return fh.read()\n",
    "def f():\n    import json\n    return json.dumps(1)\n",
    "print(__name__, __file__, __debug__)\n",
    "from os import *\ndef f():\n    return path\n",  # the module's names are unknown: nothing counts
    "def f(:\n",
])
def test_reads_that_may_be_bound_are_not(source):
    assert unbound_reads(source) == 0


SOURCE = """def group(tlist):
    has_create = False
    for tmp_token in tlist.tokens:
        if tmp_token.value == 'CREATE':
            has_create = True
    if has_create:
        return
    tidx, token = tlist.token_next_by()
    return token
"""


def test_a_sample_reading_a_name_bound_only_below_or_nowhere_is_no_candidate():
    clause = next(h for h in holes_at("grouping.py", SOURCE, 6) if h.kind == "and")
    sampler = Sampler(clause, SOURCE)
    assert sampler.add("token.value == 'AS':\n") is None, "`token` is assigned two lines below: UnboundLocalError"
    assert sampler.add("next_token is None:\n") is None, "bound nowhere: NameError"
    kept = sampler.add("not any(t.value == 'AS' for t in tlist.tokens):\n")
    assert kept is not None and "if has_create and not any(t.value == 'AS' for t in tlist.tokens):" in kept.text
    assert sampler.unbound == 2 and sampler.mutants[0] == kept and sampler.turned == 1
    loop = next(h for h in holes_at("grouping.py", SOURCE, 4) if h.kind == "line")
    assert Sampler(loop, SOURCE).add("        if tmp_token.value == 'CREATE' and tlist:\n") is not None


def test_names_the_file_already_reads_unbound_are_not_held_against_a_sample():
    source = "def f(x):\n    y = x + 1\n    return y + legacy_name\n"
    line = next(h for h in holes_at("f.py", source, 2) if h.kind == "line")
    sampler = Sampler(line, source)
    assert sampler.add("    y = x + 2\n") is not None and sampler.unbound == 0
    assert sampler.add("    y = x + other_name\n") is None and sampler.unbound == 1


MODULE = """import os

LIMIT = 3


class Pool:
    SIZE = 4

    @property
    def size(self):
        return self.SIZE

    def take(self, n):
        if n > LIMIT:
            n = LIMIT
        items = os.listdir('.')
        return items[:n]


def parse(text):
    value = int(text)
    return value * LIMIT
"""


def _changed(line: int, text: str) -> str:
    lines = MODULE.split("\n")
    lines[line - 1] = text
    return "\n".join(lines)


@pytest.mark.parametrize(("line", "text", "adds"), [
    (14, "        if n > LIMIT and items:", True),  # `items` is assigned two lines below
    (14, "        if n > SIZE:", True),  # a class body's name is not a method's to read
    (14, "        if n > LIMIT and os.sep:", False),
    (21, "    value = int(text) + LIMIT", False),
    (21, "    value = int(txt)", True),  # the parameter is `text`
    (3, "LIMIT = DEFAULT", True),  # module-level: judged in the whole file
    (3, "LIMIT = len(os.sep)", False),
    (16, "        items = super().take(n)", False),  # `super()` reads the method's `__class__`, which its class binds
])
def test_a_candidate_is_judged_in_the_function_it_changes_with_the_module_s_names_known(line, text, adds):
    check = UnboundCheck(MODULE, "pool.py")
    assert check.adds(line, line, _changed(line, text)) is adds
    assert (unbound_reads(_changed(line, text)) > unbound_reads(MODULE)) is adds, "as the whole file counts it"


def test_a_module_importing_star_or_not_parsing_adds_nothing():
    star = "from os import *\n\n\ndef f():\n    return sep\n"
    assert UnboundCheck(star).adds(5, 5, star.replace("return sep", "return made_up")) is False
    broken = "def f(:\n    pass\n"
    assert UnboundCheck(broken).adds(2, 2, broken.replace("pass", "made_up")) is False
