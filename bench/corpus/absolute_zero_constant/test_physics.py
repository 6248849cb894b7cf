from physics import is_physical


def test_is_physical():
    assert is_physical(-250)
    assert is_physical(-273.15)
    assert not is_physical(-274)
