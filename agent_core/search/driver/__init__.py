"""The host side of the search: localizing, ranking, trying candidates in sandboxed driver runs, verifying them."""
