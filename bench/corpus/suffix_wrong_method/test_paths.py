from paths import is_python_file


def test_is_python_file():
    assert is_python_file("main.py")
    assert not is_python_file("main.pyc")
    assert not is_python_file(".pylintrc")
