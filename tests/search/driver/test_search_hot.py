"""Hot mutants: the suite collected once, each mutant swapped into its live function (real bubblewrap sandbox).

The project's module counts its own imports in a file: a hot driver run imports it once whatever the number
of mutants; a mutant the swap cannot express (a default value on a `def` line, module-level code) is tried
the slow way, by a child that imports the mutated module, and still gets the right outcome.
"""

from __future__ import annotations

import ast
import asyncio
from pathlib import Path

import pytest

from agent_core.search.candidate import Mutant
from agent_core.search.driver.sandboxed import try_mutants
from agent_core.search.inside import driver_swap
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import shadowed

SHAPES = '''\
import functools
import os

with open(os.path.join(os.path.dirname(os.path.abspath(__file__)), "imports.log"), "a") as log:
    log.write("x")
LIMIT = 3


def deco(f):
    @functools.wraps(f)
    def wrapper(*args):
        return f(*args)
    return wrapper


class Box:
    def __init__(self, v):
        self.v = v

    @property
    def double(self):
        return self.v * 3

    @staticmethod
    def half(n):
        return n // 3


@deco
def wrapped(n):
    return n - 1


def outer(n):
    def inner():
        return n * 3
    return inner()


def default(n=2):
    return n
'''
TESTS = '''\
from shapes import LIMIT, Box, default, outer, wrapped


def test_double():
    assert Box(2).double == 4


def test_half():
    assert Box.half(4) == 2


def test_wrapped():
    assert wrapped(1) == 2


def test_outer():
    assert outer(2) == 4


def test_default():
    assert default() == 3


def test_limit():
    assert LIMIT == 4
'''
LINES = {n + 1: text for n, text in enumerate(SHAPES.split("\n"))}


def _line(start: str) -> int:
    return next(n for n, text in LINES.items() if text.strip().startswith(start))


@pytest.fixture
def root(tmp_path: Path):
    with shadowed(tmp_path, {"shapes.py": SHAPES, "test_shapes.py": TESTS}) as copy:
        yield copy


def _run(sandbox, root: Path, test: str, mutants: list[Mutant]) -> list[str]:
    results, _ = asyncio.run(try_mutants(sandbox, root, [f"test_shapes.py::{test}"], mutants, mutant_timeout_s=10,
                                         budget_s=60, max_passing=5, hot=True))
    return [outcome for _, outcome in results]


def _imports(root: Path) -> int:
    log = root / "imports.log"
    count = len(log.read_text()) if log.exists() else 0
    log.unlink(missing_ok=True)
    return count


@pytest.mark.e2e
@pytest.mark.parametrize("test, start, wrong, right", [
    ("test_double", "return self.v * 3", "        return self.v * 4", "        return self.v * 2"),  # a property
    ("test_half", "return n // 3", "        return n // 4", "        return n // 2"),  # a staticmethod
    ("test_wrapped", "return n - 1", "    return n - 2", "    return n + 1"),  # behind functools.wraps
    ("test_outer", "return n * 3", "        return n * 4", "        return n * 2"),  # a closure's body
])
def test_a_swapped_mutant_is_judged_without_importing_again(sandbox, root: Path, test, start, wrong, right):
    line = _line(start)
    mutants = [Mutant("shapes.py", line, wrong, "wrong"), Mutant("shapes.py", line, right, "right")]
    assert _run(sandbox, root, test, mutants) == ["failed", "passed"]
    assert _imports(root) == 1, "one import, by the collecting parent: the children swapped code"
    assert (root / "shapes.py").read_text() == SHAPES


@pytest.mark.e2e
@pytest.mark.parametrize("test, start, right", [
    ("test_default", "def default(n=2):", "def default(n=3):"),  # a default runs at import
    ("test_limit", "LIMIT = 3", "LIMIT = 4"),  # module-level code
])
def test_what_a_swap_cannot_express_is_tried_by_importing_the_mutant(sandbox, root: Path, test, start, right):
    mutants = [Mutant("shapes.py", _line(start), right, "right")]
    assert _run(sandbox, root, test, mutants) == ["passed"]
    assert _imports(root) == 2, "the hot parent's import, then the slow child's own"


def _without_end_lines(tree: ast.AST) -> ast.AST:
    """The tree as Python 3.7's ast gives it: no `end_lineno` on any node."""
    for node in ast.walk(tree):
        if hasattr(node, "end_lineno"):
            del node.end_lineno
    return tree


@pytest.mark.parametrize("start", ["return self.v * 3", "return n // 3", "return n - 1", "return n * 3", "return n"])
def test_the_function_holding_a_line_is_found_without_end_lines_as_on_python_3_7(start):
    line = _line(start)
    with_ends, last = driver_swap._chain(ast.parse(SHAPES), line, len(LINES))
    without, last_37 = driver_swap._chain(_without_end_lines(ast.parse(SHAPES)), line, len(LINES))
    assert with_ends is not None and [n.name for n in without] == [n.name for n in with_ends]
    assert last_37 >= last, "a 3.7 statement ends where the next one starts: blank lines after it included"


PACKAGE = {  # a package whose __init__ re-exports its module's names, imported by a conftest before collection
    "shop/__init__.py": "from shop.prices import price\n",
    "shop/prices.py": "def price(amount, rate=2):\n    return amount * rate\n",
    "helpers.py": "from shop import price\n\n\ndef double(amount):\n    return price(amount, 2)\n",
    "conftest.py": "import helpers  # noqa: F401 - imports the package before any test module\n",
    "test_shop.py": ("from helpers import double\nfrom shop import price\n\n\n"
                     "def test_price():\n    assert price(2) == 6\n\n\n"
                     "def test_double():\n    assert double(1) == 2\n"),
}


@pytest.mark.e2e
def test_a_slow_mutant_reaches_the_names_a_package_re_exports_after_a_conftest_imported_it(sandbox, tmp_path: Path):
    # marshmallow 3.20: tests/conftest.py imports the package, whose __init__ holds `Schema` from schema.py; a
    # default changed on a `def` line (tried the slow way) was judged against the old function, and failed
    for name, text in PACKAGE.items():
        (tmp_path / name).parent.mkdir(parents=True, exist_ok=True)
        (tmp_path / name).write_text(text)
    mutants = [Mutant("shop/prices.py", 1, "def price(amount, rate=4):", "wrong"),
               Mutant("shop/prices.py", 1, "def price(amount, rate=3):", "right")]
    with ShadowWorkspace(tmp_path) as shadow:
        results, _ = asyncio.run(try_mutants(sandbox, shadow.root, ["test_shop.py::test_price"], mutants,
                                             mutant_timeout_s=10, budget_s=60, max_passing=5, hot=True,
                                             covering=lambda m: ["test_shop.py::test_double"]))
        assert [outcome for _, outcome in results] == ["failed", "passed"]
        assert (shadow.root / "shop/prices.py").read_text() == PACKAGE["shop/prices.py"]


@pytest.mark.e2e
def test_a_slow_mutant_ranked_before_a_swapped_one_that_passes_is_still_tried_first(sandbox, root: Path):
    # the keyword drop (swapped, hot) passed and stopped the driver before the default changed on a `def` line
    # (slow), ranked before it, was tried: the later candidate won for being quicker to try
    slow = Mutant("shapes.py", _line("def default(n=2):"), "def default(n=3):", "a default, tried the slow way")
    hot = Mutant("shapes.py", _line("def default(n=2):") + 1, "    return n + 1", "swapped")
    results, stopped = asyncio.run(try_mutants(sandbox, root, ["test_shapes.py::test_default"], [slow, hot],
                                               mutant_timeout_s=10, budget_s=60, max_passing=1, hot=True))
    assert [(m.description, outcome) for m, outcome in results] == [
        ("a default, tried the slow way", "passed"), ("swapped", "passed")], "in the candidates' order"
    assert stopped == "enough"
