from money import format_price


def test_format_price():
    assert format_price(1999) == "$19.99"
    assert format_price(5) == "$0.05"
