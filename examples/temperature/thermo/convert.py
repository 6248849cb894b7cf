"""Convert temperatures; every function takes and returns floats."""

ABSOLUTE_ZERO_C = -273.15


def celsius_to_fahrenheit(celsius: float) -> float:
    return celsius * 9 / 5 + 32


def fahrenheit_to_celsius(fahrenheit: float) -> float:
    return (fahrenheit + 32) * 5 / 9


def celsius_to_kelvin(celsius: float) -> float:
    if celsius < ABSOLUTE_ZERO_C:
        raise ValueError("below absolute zero")
    return celsius - ABSOLUTE_ZERO_C
