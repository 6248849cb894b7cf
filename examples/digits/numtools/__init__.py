"""Small number utilities."""
