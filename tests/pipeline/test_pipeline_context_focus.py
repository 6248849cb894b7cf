"""render_files with `focus`: a test file shows its imports and what the failing tests need, nothing else.

The failing node ids come from a real bubblewrap-sandboxed pytest run of a
small project; the files are rendered from a real shadow workspace.
"""

from __future__ import annotations

import asyncio
from collections.abc import Iterator
from pathlib import Path

import pytest

from agent_core.models import TestReport
from agent_core.pipeline.context import focus_from_report, focus_test_source, relevant_files, render_files
from agent_core.sandbox.bubblewrap import BubblewrapSandbox
from agent_core.settings import SandboxSettings
from agent_core.testing.runner import run_tests
from agent_core.workspace.shadow import ShadowWorkspace
from engine_support import make_project

SHOP = (
    "def total(prices, discount=0):\n    return sum(prices) - discount + 1\n\n\n"
    "def count(items):\n    return len(items)\n"
)
TESTS = '''"""Tests of the shop."""
import pytest

from shop import count, total

CASES = [([1, 2], 3), ([5], 5)]
UNUSED = {"a": 1}


@pytest.fixture
def basket():
    return [2, 3]


@pytest.fixture
def unused_fixture():
    return None


def cents(x):
    return x * 100


@pytest.fixture(autouse=True)
def fresh():
    yield


def test_count():
    assert count([1, 2]) == 2


def test_count_empty():
    assert count([]) == 0


# the prices add up
@pytest.mark.parametrize("prices, expected", CASES)
def test_total(prices, expected):
    assert cents(total(prices)) == cents(expected)


class TestCart:
    def setup_method(self):
        self.items = ["a"]

    def test_count(self):
        assert count(self.items) == 1

    def test_with_discount(self, basket):
        assert total(basket, discount=1) == 4

    def test_one(self):
        assert count(["x"]) == 1


def test_last():
    assert count([0, 0, 0]) == 3
'''
FOCUSED = """import pytest

from shop import count, total

CASES = [([1, 2], 3), ([5], 5)]

@pytest.fixture
def basket():
    return [2, 3]

def cents(x):
    return x * 100

@pytest.fixture(autouse=True)
def fresh():
    yield

# the prices add up
@pytest.mark.parametrize("prices, expected", CASES)
def test_total(prices, expected):
    assert cents(total(prices)) == cents(expected)

class TestCart:
    def setup_method(self):
        self.items = ["a"]

    def test_with_discount(self, basket):
        assert total(basket, discount=1) == 4

# (5 other tests not shown)
"""


@pytest.fixture(scope="module")
def shop(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[ShadowWorkspace, TestReport]]:
    """A shadow of the shop project and the report of a real sandboxed run of its tests."""
    source = make_project(tmp_path_factory.mktemp("shop") / "proj", {"shop.py": SHOP, "tests/test_shop.py": TESTS})
    with ShadowWorkspace(source) as shadow:
        sandbox = BubblewrapSandbox(SandboxSettings(timeout_s=60))
        report = asyncio.run(run_tests(sandbox, shadow.root, "pytest", timeout_s=60))
        yield shadow, report


def test_the_run_fails_two_tests_and_passes_the_rest(shop):
    _, report = shop
    assert (report.passed, report.failed) == (5, 3)
    assert sorted(f.nodeid for f in report.failures) == [
        "tests/test_shop.py::TestCart::test_with_discount",
        "tests/test_shop.py::test_total[prices0-3]",
        "tests/test_shop.py::test_total[prices1-5]",
    ]


def test_focus_names_the_failing_functions_and_methods(shop):
    _, report = shop
    assert focus_from_report(report) == {"tests/test_shop.py": {"test_total", "TestCart.test_with_discount"}}
    assert focus_from_report(None) == {}


def test_the_test_file_shows_imports_failing_tests_and_what_they_use(shop):
    shadow, report = shop
    files = relevant_files(shadow, [], report)
    assert files == ["shop.py", "tests/test_shop.py"]
    text = render_files(shadow, files, tests_read_only=True, focus=focus_from_report(report))
    assert text == (
        f"### shop.py\n```python\n{SHOP}\n```\n\n"
        f"### tests/test_shop.py (a test: the specification, do not edit)\n```python\n{FOCUSED}\n```"
    )
    assert "def test_count_empty" not in text and "unused_fixture" not in text and "UNUSED" not in text
    assert '@pytest.mark.parametrize("prices, expected", CASES)' in text


def test_without_focus_every_file_is_whole(shop):
    shadow, report = shop
    text = render_files(shadow, relevant_files(shadow, [], report))
    assert text == f"### shop.py\n```python\n{SHOP}\n```\n\n### tests/test_shop.py\n```python\n{TESTS}\n```"


def test_a_source_file_is_whole_even_when_named_in_focus(shop):
    shadow, _ = shop
    assert render_files(shadow, ["shop.py"], focus={"shop.py": {"total"}}) == f"### shop.py\n```python\n{SHOP}\n```"


def test_a_collection_error_leaves_the_test_file_whole(tmp_path: Path):
    broken = TESTS.replace("def test_last():", "def test_last(:")
    source = make_project(tmp_path / "proj", {"shop.py": SHOP, "tests/test_shop.py": broken})
    with ShadowWorkspace(source) as shadow:
        report = asyncio.run(run_tests(BubblewrapSandbox(SandboxSettings(timeout_s=60)), shadow.root, timeout_s=60))
        assert [f.nodeid for f in report.failures] == ["tests/test_shop.py"]
        assert focus_from_report(report) == {}
        text = render_files(shadow, ["tests/test_shop.py"], focus={"tests/test_shop.py": {"test_total"}})
        assert text == f"### tests/test_shop.py\n```python\n{broken}\n```"  # it does not parse: shown whole


def test_unknown_names_leave_the_file_whole():
    assert focus_test_source(TESTS, {"test_gone"}) is None
    assert focus_test_source(TESTS, {"TestGone.test_x"}) is None


def test_a_failing_class_without_a_method_name_is_shown_whole():
    text = focus_test_source(TESTS, {"TestCart"})
    assert text is not None and "    def test_one(self):" in text and "def test_total" not in text
    assert text.endswith("# (4 other tests not shown)\n")


def test_one_hidden_test_is_counted_in_the_singular():
    hidden = "def test_b():\n    assert count([1, 2, 3]) == 3\n    assert count([1]) == 1\n"
    source = f"from shop import count\n\n\ndef test_a():\n    assert count([]) == 1\n\n\n{hidden}"
    assert focus_test_source(source, {"test_a"}) == (
        "from shop import count\n\ndef test_a():\n    assert count([]) == 1\n\n# (1 other test not shown)\n"
    )


def test_a_cut_that_saves_nothing_shows_the_file_as_it_is():
    source = "from shop import count\n\n\ndef test_a():\n    assert count([]) == 1\n\n\ndef test_b():\n    pass\n"
    assert focus_test_source(source, {"test_a"}) is None
