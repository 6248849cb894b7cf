from words import longest_word


def test_longest():
    assert longest_word("a quick brown fox jumps") == "quick"


def test_empty():
    assert longest_word("") == ""
