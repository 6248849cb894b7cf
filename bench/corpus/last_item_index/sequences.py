"""Sequence accessors."""


def last(items):
    if not items:
        return None
    return items[len(items)]
