import pytest

from temperature import celsius_to_fahrenheit, fahrenheit_to_celsius


@pytest.mark.parametrize("c, f", [(0, 32), (100, 212), (-40, -40)])
def test_round_trip(c, f):
    assert celsius_to_fahrenheit(c) == pytest.approx(f)
    assert fahrenheit_to_celsius(f) == pytest.approx(c)
