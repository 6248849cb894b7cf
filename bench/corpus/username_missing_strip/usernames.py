"""User name canonicalisation."""


def canonical(username):
    return username.lower()
