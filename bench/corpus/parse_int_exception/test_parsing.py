from parsing import parse_int


def test_parse_int():
    assert parse_int("42") == 42
    assert parse_int("forty-two") == 0
    assert parse_int("x", default=-1) == -1
