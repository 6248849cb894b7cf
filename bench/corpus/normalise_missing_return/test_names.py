from names import normalise


def test_normalise():
    assert normalise("  ada   lovelace ") == "Ada Lovelace"
