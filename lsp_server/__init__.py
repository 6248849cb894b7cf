"""agentls' language server: LSP (pygls, lsprotocol) in front of `agent_core`.

`build_server()` in `server.py` is the one composition root; each feature
module exposes `register(server, ...)` taking the services it uses as typed
parameters. Only this package imports pygls and lsprotocol; `agent_core`
never imports it.
"""

__version__ = "0.1.0"
