"""A leaderboard."""


def top(scores, n):
    """The `n` highest scores, highest first."""
    return sorted(scores)[:n]
