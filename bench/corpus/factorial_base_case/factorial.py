"""Factorials, recursively."""


def factorial(n):
    if n < 0:
        raise ValueError("factorial of a negative number")
    if n == 1:
        return 1
    return n * factorial(n - 1)
