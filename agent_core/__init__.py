"""agentls engine: plans, codes, tests in a sandbox and reflects. Knows nothing of LSP.

The version has one source: pyproject.toml's `version`, read back from the
installed distribution's metadata (a source tree never installed says so).
"""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("agentls")
except PackageNotFoundError:  # imported from a source tree that was never installed
    __version__ = "0+unknown"
