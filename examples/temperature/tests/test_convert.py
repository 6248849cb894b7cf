import pytest

from thermo.convert import celsius_to_fahrenheit, celsius_to_kelvin, fahrenheit_to_celsius


@pytest.mark.parametrize("celsius, fahrenheit", [(0, 32), (100, 212), (-40, -40), (37, 98.6)])
def test_both_directions(celsius, fahrenheit):
    assert celsius_to_fahrenheit(celsius) == pytest.approx(fahrenheit)
    assert fahrenheit_to_celsius(fahrenheit) == pytest.approx(celsius)


def test_kelvin():
    assert celsius_to_kelvin(0) == pytest.approx(273.15)
    with pytest.raises(ValueError):
        celsius_to_kelvin(-300)
