"""agentls as a Model Context Protocol server: sandboxed checks of the project for any MCP client.

`server.py` is the composition root (`build_server`); `tools.py` and
`resources.py` expose `register(server, deps)`; all engine <-> MCP conversion
lives in `convert.py`. Only this package imports the `mcp` SDK; `agent_core`
never imports it.
"""
