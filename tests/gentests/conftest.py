"""Fixtures of the gentests tests; they live in gentests_support.py so test modules
can import its helpers by a unique name."""

from gentests_support import shop_workspace  # noqa: F401 - fixtures, registered by being here
