"""The partial outline of a file around the definitions the coder is shown whole."""

from __future__ import annotations

import pytest

from agent_core.analysis.outline import partial_outline

GEO = (
    "class Shape:\n    '''Any shape.'''\n    def area(self) -> float:\n        return 0.0\n"
    "    class Unit:\n        def size(self):\n            return 1\n\n"
    "@register\nasync def load(path: str, *, strict: bool = False) -> Shape:\n    body = 1\n    return Shape()\n"
)
SHAPE = "class Shape:  # Any shape."
AREA = "    def area(self) -> float:"
UNIT = ["    class Unit:", "        def size(self):"]
LOAD = "@register async def load(path: str, *, strict: bool = False) -> Shape:"
SHOWN = "  # shown whole below"


@pytest.mark.parametrize(
    "shown, near, max_chars, expected",
    [
        ({"Shape.area"}, set(), 1500, [SHAPE, AREA + SHOWN, *UNIT, LOAD]),
        ({"load"}, set(), 1500, [SHAPE, AREA, *UNIT, LOAD + SHOWN]),
        # over the budget: the shown method and its class first, then a count of what was left out
        ({"Shape.area"}, {"load"}, 60, [SHAPE, AREA + SHOWN, "# ... 3 more definitions not shown"]),
    ],
)
def test_partial_outline(shown: set[str], near: set[str], max_chars: int, expected: list[str]):
    text = partial_outline(GEO, shown, near, max_chars)
    assert text.splitlines() == expected
    assert "return" not in text and "body = 1" not in text
