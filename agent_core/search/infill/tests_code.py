"""The failing tests' own code, shown to the model beside the hole it fills.

What a failing test expects is often written in the test itself: the message a
`pytest.raises(..., match=...)` wants, the value an `assert` compares with, the
call that breaks. `failing_tests_code` reads the test functions of the failing
node ids (`path::Class::name`, `path::name`, a parametrized `name[...]`) from
the workspace: each test's source, under its class's header for a method, at
most TEST_CHARS each and TESTS of them, one entry per test file. prompt.py puts
them in front of the code with the hole as other files of the repository,
where the model was trained to read them (Qwen2.5-Coder's repository-level
layout), not as comments above the hole (the model went on writing comments).

On the bundled model, 8 samples of a five-line hole of a real bug, with and
without the test's code as another file: 4 and 0 samples wrote the message the
test matches.
"""

from __future__ import annotations

import ast
from collections.abc import Iterable
from pathlib import Path

from agent_core.search.evidence.called import find_test

TESTS = 2  # failing tests shown
TEST_CHARS = 1200  # of each test's source


def _source(lines: list[str], node: ast.AST) -> str:
    first = min([node.lineno, *(d.lineno for d in getattr(node, "decorator_list", []))])  # type: ignore[attr-defined]
    return "\n".join(lines[first - 1 : node.end_lineno]) + "\n"  # type: ignore[attr-defined]


def _test_code(root: Path, nodeid: str) -> tuple[str, str] | None:
    """(the test file's path, the test's source under its class header) of `nodeid`; None when it is not found."""
    found = find_test(root, nodeid)
    if found is None:
        return None
    path, lines, owner, node = found
    code = _source(lines, node)
    if owner is not None:
        header = lines[owner.lineno - 1]
        code = f"{header}\n{code}" if header.rstrip().endswith(":") else code
    return path, code[:TEST_CHARS]


def failing_tests_code(root: Path, failing: Iterable[str]) -> list[tuple[str, str]]:
    """(path, code) per test file: the sources of the first TESTS failing tests found (module docstring), in
    the order given; a test whose file or function cannot be read is left out."""
    found: dict[str, list[str]] = {}
    shown = 0
    for nodeid in failing:
        if shown >= TESTS:
            break
        entry = _test_code(root, nodeid)
        if entry is None or entry[1] in found.get(entry[0], []):
            continue
        found.setdefault(entry[0], []).append(entry[1])
        shown += 1
    return [(path, "\n".join(codes)) for path, codes in found.items()]

