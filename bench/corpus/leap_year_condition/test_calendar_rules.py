import pytest

from calendar_rules import is_leap


@pytest.mark.parametrize("year, leap", [(2024, True), (1900, False), (2000, True), (2023, False)])
def test_is_leap(year, leap):
    assert is_leap(year) is leap
