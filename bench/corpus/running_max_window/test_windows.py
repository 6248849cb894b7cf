from windows import window_sums


def test_window_sums():
    assert window_sums([1, 2, 3, 4], 2) == [3, 5, 7]
    assert window_sums([5], 1) == [5]
