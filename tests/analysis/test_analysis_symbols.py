"""Table tests of symbols, imports, enclosing symbols and existing tests on real-looking modules."""

from __future__ import annotations

from pathlib import Path

import pytest

from agent_core.analysis.symbols import analyse, enclosing_symbol, existing_tests, find_symbol
from agent_core.models import Position, Span

INVENTORY = '''"""Inventory of a small shop."""
from __future__ import annotations

import functools
import json as _json
from dataclasses import dataclass, field
from .money import Money, round_cents as rc

try:
    import orjson
except ImportError:  # pragma: no cover
    orjson = None


@dataclass(frozen=True)
class Item:
    """One stocked item."""

    sku: str
    price: Money

    class Meta:
        table = "items"

        class Index:
            def columns(self) -> list[str]:
                return ["sku"]

    @property
    def label(self) -> str:
        """Human label."""
        return self.sku.upper()

    @staticmethod
    @functools.cache
    def parse(text: str) -> "Item":
        sku, price = text.split(":")
        return Item(sku, Money(price))


async def fetch_items(session, *, limit: int = 10) -> list[Item]:
    """Fetch up to `limit` items.

    Raises ValueError when limit is negative.
    """
    if limit < 0:
        raise ValueError(limit)
    async with session.get("/items") as response:
        return [Item.parse(x) for x in await response.json()]


def total(items: list[Item]) -> Money:
    return sum((i.price for i in items), Money(0))
'''

BROKEN = '''import os

def good(a, b):
    """Adds."""
    return a + b

def broken(x:
    return x

class Survivor:
    def method(self):
        return 1

def after():
    return 2
'''


def _by_qualname(source: str) -> dict:
    return {s.qualname: s for s in analyse(source).symbols}


@pytest.mark.parametrize(
    ("qualname", "kind", "is_async", "first_line", "last_line", "decorators"),
    [
        ("Item", "class", False, 15, 38, ["dataclass(frozen=True)"]),
        ("Item.Meta", "class", False, 22, 27, []),
        ("Item.Meta.Index", "class", False, 25, 27, []),
        ("Item.Meta.Index.columns", "method", False, 26, 27, []),
        ("Item.label", "method", False, 29, 32, ["property"]),
        ("Item.parse", "method", False, 34, 38, ["staticmethod", "functools.cache"]),
        ("fetch_items", "function", True, 41, 49, []),
        ("total", "function", False, 52, 53, []),
    ],
)
def test_symbols_of_a_real_looking_module(qualname, kind, is_async, first_line, last_line, decorators):
    symbol = _by_qualname(INVENTORY)[qualname]
    assert (symbol.kind, symbol.is_async) == (kind, is_async)
    assert (symbol.start_line, symbol.end_line) == (first_line, last_line)
    assert symbol.decorators == decorators


@pytest.mark.parametrize(
    ("qualname", "docstring", "signature"),
    [
        ("Item", "One stocked item.", "class Item:"),
        ("Item.label", "Human label.", "def label(self) -> str:"),
        ("fetch_items", "Fetch up to `limit` items.\n\nRaises ValueError when limit is negative.",
         "async def fetch_items(session, *, limit: int = 10) -> list[Item]:"),
        ("total", None, "def total(items: list[Item]) -> Money:"),
    ],
)
def test_docstrings_and_signatures(qualname, docstring, signature):
    symbol = _by_qualname(INVENTORY)[qualname]
    assert symbol.docstring == docstring
    assert symbol.signature == signature


def test_symbol_source_includes_decorators_and_parent():
    parse = _by_qualname(INVENTORY)["Item.parse"]
    assert parse.source.startswith("@staticmethod\n    @functools.cache\n    def parse")
    assert parse.parent == "Item"


def test_imports_include_aliases_relative_and_try_blocks():
    found = [(i.module, i.name, i.alias, i.line) for i in analyse(INVENTORY).imports]
    assert found == [
        ("__future__", "annotations", None, 2),
        ("functools", None, None, 4),
        ("json", None, "_json", 5),
        ("dataclasses", "dataclass", None, 6),
        ("dataclasses", "field", None, 6),
        (".money", "Money", None, 7),
        (".money", "round_cents", "rc", 7),
        ("orjson", None, None, 10),
    ]


def test_syntax_errors_still_yield_what_can_be_recovered():
    info = analyse(BROKEN)
    assert info.has_errors
    names = [s.qualname for s in info.symbols]
    for expected in ("good", "Survivor", "Survivor.method", "after"):
        assert expected in names
    assert _by_qualname(BROKEN)["good"].docstring == "Adds."
    assert [i.module for i in info.imports] == ["os"]


def _at(line: int, char: int, end_line: int | None = None, end_char: int | None = None) -> Span:
    end = Position(
        line=end_line if end_line is not None else line, character=end_char if end_char is not None else char
    )
    return Span(start=Position(line=line, character=char), end=end)


@pytest.mark.parametrize(
    ("span", "expected"),
    [
        (_at(26, 20), "Item.Meta.Index.columns"),  # inside the nested method body (0-based lines)
        (_at(22, 8), "Item.Meta"),
        (_at(30, 8, 31, 10), "Item.label"),
        (_at(28, 4, 33, 4), "Item"),  # spans two methods: the class encloses both
        (_at(46, 4), "fetch_items"),
        (_at(3, 0), None),  # module level
        (_at(33, 4), "Item.parse"),  # on the decorator line
    ],
)
def test_enclosing_symbol(span, expected):
    found = enclosing_symbol(analyse(INVENTORY).symbols, span)
    assert (found.qualname if found else None) == expected


def test_find_symbol_by_qualname_then_name():
    symbols = analyse(INVENTORY).symbols
    assert find_symbol(symbols, "Item.Meta.Index.columns").name == "columns"
    assert find_symbol(symbols, "label").qualname == "Item.label"
    assert find_symbol(symbols, "missing") is None


def test_non_ascii_columns_are_code_points():
    source = 'NAME = "é€"; x = 1\ndef f():\n    s = "ünïcode"; return s\n'
    f = analyse(source).symbols[0]
    assert f.span.start == Position(line=1, character=0)
    assert f.span.end == Position(line=2, character=len('    s = "ünïcode"; return s'))


def test_existing_tests_referencing_a_symbol(tmp_path: Path):
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_shop.py").write_text(
        "from shop import total, totals\n\n"
        "def test_total():\n    assert total([]) == 0\n\n"
        "def test_other():\n    assert totals() == []\n\n"
        "class TestShop:\n    def test_total_again(self):\n        assert total([1]) == 1\n"
    )
    (tmp_path / "pkg").mkdir()
    (tmp_path / "pkg" / "shop_test.py").write_text("def test_x():\n    return total\n")
    (tmp_path / "pkg" / "helpers.py").write_text("def test_helper():\n    return total\n")
    refs = [(r.file, r.test, r.line) for r in existing_tests(tmp_path, "total")]
    assert refs == [
        ("pkg/shop_test.py", "test_x", 1),
        ("tests/test_shop.py", "test_total", 3),
        ("tests/test_shop.py", "TestShop.test_total_again", 10),
    ]
