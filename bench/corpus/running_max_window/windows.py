"""Sliding windows."""


def window_sums(values, width):
    """Sum of every window of `width` consecutive values."""
    return [sum(values[i : i + width - 1]) for i in range(len(values) - width)]
