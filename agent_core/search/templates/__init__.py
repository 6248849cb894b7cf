"""The templates: edits beyond one token, one module per kind, and the table of kinds (table.py)."""
