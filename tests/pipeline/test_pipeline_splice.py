"""pipeline/coder/splice.py directly: each rule of putting a whole definition back where it was."""

from __future__ import annotations

import pytest

from agent_core.pipeline.coder.splice import splice_definition

MODULE = (
    "import os\n\nLIMIT = 3\n\n\ndef add(a, b):\n    return a - b\n\n\n"
    "class Box:\n    def size(self):\n        return 0\n"
)


@pytest.mark.parametrize(
    "answer, expected",
    [
        # a function replaces the one definition of its name
        ("def add(a, b):\n    return a + b\n", MODULE.replace("a - b", "a + b")),
        # a method, by its name, at its own indentation
        ("    def size(self):\n        return 1\n", MODULE.replace("return 0", "return 1")),
        # a module-level assignment replaces the one assignment to that name
        ("LIMIT = 4\n", MODULE.replace("LIMIT = 3", "LIMIT = 4")),
        # a new import goes after the file's last import, the definition in its place
        (
            "import math\n\ndef add(a, b):\n    return math.fsum([a, b])\n",
            MODULE.replace("import os\n", "import os\nimport math\n").replace("a - b", "math.fsum([a, b])"),
        ),
        # a new helper goes at the end
        ("def helper():\n    return 1\n", MODULE + "\n\ndef helper():\n    return 1\n"),
        # a new test function the model wrote along is dropped
        ("def test_new():\n    assert add(2, 3) == 5\n", MODULE),
    ],
)
def test_a_definition_is_spliced_in_its_place(answer: str, expected: str):
    assert splice_definition(MODULE, answer) == expected


@pytest.mark.parametrize(
    "answer",
    [
        "print('hi')\n",  # a bare statement
        "def add(:\n",  # not Python
        "",  # nothing
    ],
)
def test_an_answer_that_is_no_definition_is_no_splice(answer: str):
    assert splice_definition(MODULE, answer) is None


def test_an_ambiguous_name_is_no_splice():
    twice = MODULE + "\n\ndef add(a, b):\n    return 0\n"
    assert splice_definition(twice, "def add(a, b):\n    return a + b\n") is None
