from pricing import apply_discount


def test_apply_discount():
    assert apply_discount(200, 25) == 150
    assert apply_discount(10, 0) == 10
