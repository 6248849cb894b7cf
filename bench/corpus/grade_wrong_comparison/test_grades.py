import pytest

from grades import letter


@pytest.mark.parametrize("score, grade", [(95, "A"), (90, "A"), (89, "B"), (80, "B"), (70, "C"), (12, "F")])
def test_letter(score, grade):
    assert letter(score) == grade
