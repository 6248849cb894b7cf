"""Lines run only to describe a failure are not evidence of it (search/inside/driver_localize.py `QUIET`).

A failed `assert tok.kind == "name"` makes pytest write the `repr` of `tok`; a failed `assertEqual` makes unittest
write it; pytest's report of a failed test takes `str` of its exception. Those run the workspace's `__repr__` and
`__str__` in the failing tests alone, and Ochiai ranked them first (the top three suspects of two real sqlparse
bugs). Recorded per test in the real bubblewrap sandbox, by coverage.py (agentls' own Python) and by the line
tracer (a project's Python 3.8 venv with pytest 8.3.5, and 3.6 with pytest 3.10.1, neither with coverage.py): a
test's own call of `repr` still counts.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.sandbox.factory import make_sandbox
from agent_core.search.driver.sandboxed import collect_coverage
from agent_core.settings import SandboxSettings
from agent_core.workspace.shadow import ShadowWorkspace
from old_python import copy_venv_into

CODE = (
    "class Token:\n"                                          # 1
    "    def __init__(self, text):\n"                         # 2
    "        self.text = text\n"                              # 3
    "        self.kind = 'word' if text.isalpha() else 'other'\n"  # 4: the bug, `_` is a word too
    "\n"
    "    def __repr__(self):\n"                               # 6
    "        return 'Token(%r)' % (self.text,)\n"             # 7
    "\n"
    "    def __eq__(self, other):\n"                          # 9
    "        return isinstance(other, Token) and other.kind == self.kind\n"  # 10
    "\n"
    "\n"
    "class BadToken(Exception):\n"                            # 13
    "    def __str__(self):\n"                                # 14
    "        return 'bad token'\n"                            # 15
    "\n"
    "\n"
    "def check(tok):\n"                                       # 18
    "    if tok.kind != 'word':\n"                            # 19
    "        raise BadToken()\n"                              # 20
    "    return tok\n"                                        # 21
)
TESTS = (
    "import unittest\n\nfrom tok import Token, check\n\n\n"
    "def test_underscore_is_a_word():\n    tok = Token('a_b')\n    assert tok.kind == 'word', tok\n\n\n"
    "def test_underscore_checks():\n    check(Token('x_y'))\n\n\n"
    "def test_letters():\n    assert Token('ab').kind == 'word'\n\n\n"
    "def test_repr_itself():\n    assert repr(Token('ab')) == \"Token('ab')\"\n\n\n"
    "class TestUnit(unittest.TestCase):\n"
    "    def test_equal_words(self):\n        self.assertEqual(Token('a_c'), Token('ac'))\n"
)
REPR, STR = [7], [15]


@pytest.fixture(params=[None, "py3.8.18-pytest8.3.5", "py3.6.15-pytest3.10.1"],
                ids=["coverage.py", "line-tracer-3.8", "line-tracer-3.6-pytest3.10"])
def coverage(request: pytest.FixtureRequest, tmp_path: Path) -> Iterator[dict]:
    (tmp_path / "tok.py").write_text(CODE)
    (tmp_path / "test_tok.py").write_text(TESTS)
    if request.param:
        copy_venv_into(tmp_path, request.param)
    with ShadowWorkspace(tmp_path) as shadow:
        sandbox = make_sandbox(SandboxSettings(backend="bubblewrap", timeout_s=120))
        data = asyncio.run(collect_coverage(sandbox, shadow.root, [], timeout_s=90, test_timeout_s=10))
        recorder = "agentls' line tracer" if request.param else "coverage.py "
        assert data.get("recorder", "").startswith(recorder), data.get("recorder") or data.get("error")
        yield data


@pytest.mark.e2e
def test_what_describes_a_failure_is_not_recorded_as_the_failing_tests_lines(coverage: dict) -> None:
    assert "error" not in coverage, coverage.get("error")
    assert coverage["outcomes"] == {
        "test_tok.py::test_underscore_is_a_word": "failed", "test_tok.py::test_underscore_checks": "failed",
        "test_tok.py::test_letters": "passed", "test_tok.py::test_repr_itself": "passed",
        "test_tok.py::TestUnit::test_equal_words": "failed"}
    lines = coverage["files"]["tok.py"]
    assert lines["test_tok.py::test_underscore_is_a_word"] == [3, 4], "pytest's assert explanation wrote repr(tok)"
    assert lines["test_tok.py::test_underscore_checks"] == [3, 4, 19, 20], "pytest's report wrote str(BadToken())"
    assert lines["test_tok.py::TestUnit::test_equal_words"] == [3, 4, 10], "unittest's message wrote repr(Token)"
    assert set(REPR) <= set(lines["test_tok.py::test_repr_itself"]), "a test's own repr() is the test's"
    assert not set(STR) & {n for per_test in lines.values() for n in per_test}
