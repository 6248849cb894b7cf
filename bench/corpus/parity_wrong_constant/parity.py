"""Parity."""


def is_even(n):
    return n % 2 == 1


def evens(numbers):
    return [n for n in numbers if is_even(n)]
