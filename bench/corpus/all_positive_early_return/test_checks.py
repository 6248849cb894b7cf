from checks import all_positive


def test_all_positive():
    assert all_positive([1, 2, 3])


def test_one_negative_later():
    assert not all_positive([1, 2, -3])


def test_empty():
    assert all_positive([])
