"""Name normalisation."""


def normalise(name):
    cleaned = " ".join(name.split())
    cleaned.title()
