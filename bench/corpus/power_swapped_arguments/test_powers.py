from powers import cube, square


def test_square():
    assert square(5) == 25
    assert square(3) == 9


def test_cube():
    assert cube(2) == 8
