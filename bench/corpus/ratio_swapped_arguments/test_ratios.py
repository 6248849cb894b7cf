from ratios import hit_rate


def test_hit_rate():
    assert hit_rate(1, 4) == 0.25


def test_no_attempts():
    assert hit_rate(0, 0) == 0.0
