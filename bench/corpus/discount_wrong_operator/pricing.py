"""Discounts."""


def apply_discount(price, percent):
    return round(price * (1 + percent / 100), 2)
