from dupes import has_duplicates


def test_with_duplicates():
    assert has_duplicates([1, 2, 3, 2])


def test_without_duplicates():
    assert not has_duplicates([1, 2, 3])
