"""Reading lines."""


def clean_lines(text):
    return [line[:-1] for line in text.splitlines(keepends=True)]
