from appconfig import retries, timeout


def test_timeout_from_config():
    assert timeout({"timeout_s": 5}) == 5


def test_defaults():
    assert timeout({}) == 30
    assert retries({}) == 3
