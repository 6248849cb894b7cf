"""Fixtures of the local_model tests; they live in local_model_support.py so test
modules can import its helpers by a unique name."""

from local_model_support import fake_model, server_env  # noqa: F401 - fixtures, registered by being here
