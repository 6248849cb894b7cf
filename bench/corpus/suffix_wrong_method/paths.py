"""Path checks."""


def is_python_file(name):
    return name.startswith(".py")
