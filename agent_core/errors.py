"""Exceptions every layer shares, at the bottom of the import graph.

Each is an expected failure a front end reports to the user (the CLI exits
with code 2, the language server shows the message); none is a bug. They live
here so a lower module can raise them without importing the engine.
"""

from __future__ import annotations


class BadRequest(ValueError):
    """A request the engine cannot act on (the message says why)."""


class ResumeError(BadRequest):
    """A run that cannot be resumed (the message says why)."""


class UnknownRun(FileNotFoundError, LookupError):
    """No journal for the requested run (the message lists recent runs)."""
