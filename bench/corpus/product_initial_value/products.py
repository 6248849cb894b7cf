"""Products of numbers."""


def product(numbers):
    result = 0
    for n in numbers:
        result *= n
    return result
