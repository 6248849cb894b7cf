import pytest

from numtools.digits import digit_sum, digital_root


def test_digit_sum():
    assert digit_sum(0) == 0
    assert digit_sum(1234) == 10


def test_digital_root():
    assert digital_root(7) == 7
    assert digital_root(1234) == 1
    assert digital_root(99999) == 9


def test_negative():
    with pytest.raises(ValueError):
        digit_sum(-5)
