"""Fixtures of the LSP tests; they live in lsp_support.py so test modules can import its helpers by a unique name."""

from lsp_support import lsp_session  # noqa: F401 - a fixture, registered by being here
