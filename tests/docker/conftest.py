"""Fixtures of the Docker backend tests: the real engine (see tests/docker_engine.py)."""

from docker_engine import docker_engine  # noqa: F401 - session fixture, re-exported for this directory
