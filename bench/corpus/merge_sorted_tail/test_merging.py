from merging import merge


def test_merge():
    assert merge([1, 4, 9], [2, 3]) == [1, 2, 3, 4, 9]
    assert merge([], [1]) == [1]
