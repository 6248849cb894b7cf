"""Fixtures of the MCP tests; they live in mcp_support.py so test modules can import its helpers by a unique name."""

from mcp_support import mcp_session  # noqa: F401 - a fixture, registered by being here
