"""Pages of a list of results; pages are numbered from 1."""


def page_count(total: int, size: int) -> int:
    """How many pages `total` items fill at `size` items per page."""
    if size <= 0:
        raise ValueError("page size must be positive")
    return (total + size - 1) // size


def paginate(items: list, page: int, size: int) -> list:
    """The items shown on `page` (1-based) at `size` items per page."""
    if page < 1 or page > max(page_count(len(items), size), 1):
        raise IndexError(f"no page {page}")
    start = page * size
    return items[start : start + size]
