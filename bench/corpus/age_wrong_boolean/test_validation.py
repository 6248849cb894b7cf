from validation import valid_age


def test_valid():
    assert valid_age(0) and valid_age(42)


def test_invalid():
    assert not valid_age(-1)
    assert not valid_age(200)
