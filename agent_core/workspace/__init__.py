"""The shadow workspace a run edits, its path guard and the file tools on it."""
