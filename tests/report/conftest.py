"""Fixtures of the run report tests.

They live in report_support.py so test modules can import its helpers by a unique name.
"""

from report_support import reported_run  # noqa: F401 - a fixture, registered by being here
