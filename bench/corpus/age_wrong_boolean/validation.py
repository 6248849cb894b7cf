"""Input validation."""


def valid_age(age):
    return 0 <= age or age <= 130
