from bsearch import index_of


def test_found():
    assert index_of([1, 3, 5, 7, 9], 7) == 3


def test_single_and_last():
    assert index_of([4], 4) == 0
    assert index_of([1, 3, 5], 5) == 2


def test_missing():
    assert index_of([1, 3, 5], 4) == -1
