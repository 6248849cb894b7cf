"""Clamping."""


def clamp(x, lo, hi):
    return min(lo, max(x, hi))
