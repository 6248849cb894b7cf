"""The failing tests' own code, read from the workspace for the model's prompt: methods under their class
header, parametrized ids, several tests of one file together, and what cannot be read left out."""

from __future__ import annotations

from pathlib import Path

from agent_core.search.infill.tests_code import TEST_CHARS, TESTS, failing_tests_code

TESTS_PY = '''import pytest


class TestAttrs:
    helper = 1

    def test_spaces(self, env):
        with pytest.raises(ValueError, match="Spaces are not allowed"):
            env.render({"a b": 1})


@pytest.mark.parametrize("n", [1, 2])
def test_double(n):
    assert double(n) == 2 * n
'''


def _project(tmp_path: Path) -> Path:
    (tmp_path / "tests").mkdir()
    (tmp_path / "tests" / "test_attrs.py").write_text(TESTS_PY)
    return tmp_path


def test_a_method_comes_under_its_class_header_and_a_parametrized_test_by_its_name(tmp_path):
    root = _project(tmp_path)
    code = failing_tests_code(root, ["tests/test_attrs.py::TestAttrs::test_spaces",
                                     "tests/test_attrs.py::test_double[2]"])
    assert code == [("tests/test_attrs.py",
                     "class TestAttrs:\n    def test_spaces(self, env):\n"
                     "        with pytest.raises(ValueError, match=\"Spaces are not allowed\"):\n"
                     "            env.render({\"a b\": 1})\n"
                     "\n@pytest.mark.parametrize(\"n\", [1, 2])\ndef test_double(n):\n"
                     "    assert double(n) == 2 * n\n")]


def test_what_cannot_be_read_is_left_out_and_at_most_a_few_tests_are_shown(tmp_path):
    root = _project(tmp_path)
    (root / "tests" / "test_long.py").write_text("def test_long():\n" + "    x = 1\n" * 400)
    failing = ["tests/missing.py::test_x", "tests/test_attrs.py::test_nothing", "tests/test_attrs.py::TestAttrs",
               "tests/test_long.py::test_long", "tests/test_attrs.py::test_double[1]",
               "tests/test_attrs.py::test_double[2]", "tests/test_attrs.py::TestAttrs::test_spaces"]
    code = failing_tests_code(root, failing)
    assert [path for path, _ in code] == ["tests/test_long.py", "tests/test_attrs.py"]
    assert len(code[0][1]) == TEST_CHARS, "a long test is cut"
    assert code[1][1].count("def test_double") == 1, "the same test's parameters are shown once"
    assert TESTS == 2 and "test_spaces" not in code[1][1], "no more than TESTS tests"
