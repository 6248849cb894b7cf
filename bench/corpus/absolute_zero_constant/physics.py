"""Physical sanity checks."""

ABSOLUTE_ZERO_C = -237.15


def is_physical(celsius):
    return celsius >= ABSOLUTE_ZERO_C
