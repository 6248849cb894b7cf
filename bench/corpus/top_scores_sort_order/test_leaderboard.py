from leaderboard import top


def test_top():
    assert top([5, 1, 9, 7], 2) == [9, 7]
