"""Dictionary helpers."""


def invert(mapping):
    """Swap keys and values."""
    return {key: value for key, value in mapping.items()}
