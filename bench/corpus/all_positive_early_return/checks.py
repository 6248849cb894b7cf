"""Checks over sequences."""


def all_positive(numbers):
    for n in numbers:
        if n > 0:
            return True
    return False
