from lines import clean_lines


def test_clean_lines():
    assert clean_lines("a\nbc\n") == ["a", "bc"]
    assert clean_lines("a\nlast") == ["a", "last"]
