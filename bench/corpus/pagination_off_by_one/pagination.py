"""Split a list into numbered pages (pages start at 1)."""


def paginate(items, page, size):
    """Items on `page` (1-based) when showing `size` items per page."""
    start = page * size
    return items[start : start + size]


def page_count(total, size):
    return (total + size - 1) // size
