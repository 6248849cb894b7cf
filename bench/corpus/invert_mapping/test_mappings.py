from mappings import invert


def test_invert():
    assert invert({"a": 1, "b": 2}) == {1: "a", 2: "b"}
