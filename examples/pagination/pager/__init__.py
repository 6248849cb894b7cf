"""Split result lists into pages for display."""
