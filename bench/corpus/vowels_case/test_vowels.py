from vowels import count_vowels


def test_count_vowels():
    assert count_vowels("banana") == 3
    assert count_vowels("AEIOU") == 5
