from usernames import canonical


def test_canonical():
    assert canonical("  Alice ") == "alice"
    assert canonical("BOB") == "bob"
