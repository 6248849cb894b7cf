"""Sandboxes that run untrusted tests: bubblewrap, Docker, plain process."""
