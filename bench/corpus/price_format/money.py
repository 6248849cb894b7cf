"""Money formatting."""


def format_price(cents):
    return f"${cents / 100:.1f}"
