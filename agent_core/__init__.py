"""agentls engine: plans, codes, tests in a sandbox and reflects. Knows nothing of LSP."""

__version__ = "0.1.0"
