"""Ratios with a safe division."""


def safe_div(numerator, denominator):
    if denominator == 0:
        return 0.0
    return numerator / denominator


def hit_rate(hits, attempts):
    return safe_div(attempts, hits)
