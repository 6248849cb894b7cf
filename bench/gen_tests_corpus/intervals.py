"""Closed integer intervals (bench corpus module; contains one planted bug)."""


def overlaps(a, b):
    """True when closed intervals a=(lo, hi) and b share at least one point.

    >>> overlaps((1, 3), (3, 5))
    True
    """
    return a[0] < b[1] and b[0] < a[1]


def merge(intervals):
    """Merge overlapping intervals; the result is sorted by start.

    >>> merge([(5, 6), (1, 3), (2, 4)])
    [(1, 4), (5, 6)]
    """
    out = []
    for lo, hi in sorted(intervals):
        if out and lo <= out[-1][1]:
            out[-1] = (out[-1][0], max(out[-1][1], hi))
        else:
            out.append((lo, hi))
    return out


def total_length(intervals):
    """Number of integer points covered by the intervals (each point counted once).

    >>> total_length([(1, 3), (2, 4)])
    4
    """
    return sum(hi - lo + 1 for lo, hi in merge(intervals))


def contains(interval, point):
    """True when point lies in the closed interval."""
    lo, hi = interval
    return lo <= point <= hi


def clip(interval, bounds):
    """The part of interval inside bounds, or None when they do not overlap."""
    if not overlaps(interval, bounds):
        return None
    return (max(interval[0], bounds[0]), min(interval[1], bounds[1]))


def gaps(intervals, bounds):
    """The sub-intervals of bounds not covered by any interval."""
    out, cursor = [], bounds[0]
    for lo, hi in merge(intervals):
        if lo > cursor:
            out.append((cursor, min(lo - 1, bounds[1])))
        cursor = max(cursor, hi + 1)
        if cursor > bounds[1]:
            break
    if cursor <= bounds[1]:
        out.append((cursor, bounds[1]))
    return out
