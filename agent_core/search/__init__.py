"""Fault localization and the single-edit mutant search tried before any model call."""
