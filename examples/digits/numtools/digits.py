"""Digit sums, recursively."""


def digit_sum(n: int) -> int:
    """Sum of the decimal digits of a non-negative integer."""
    if n < 0:
        raise ValueError("negative numbers have no digit sum here")
    if n < 10:
        return n
    return n % 10 + digit_sum(n // 10)


def digital_root(n: int) -> int:
    """Repeat the digit sum until one digit is left."""
    return digital_root(digit_sum(n))
