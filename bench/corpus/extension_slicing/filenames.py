"""File name helpers."""


def extension(name):
    """The extension without its dot, or "" when there is none."""
    dot = name.rfind(".")
    if dot <= 0:
        return ""
    return name[dot:]
