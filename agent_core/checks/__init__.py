"""Front doors beside `Engine.run` for one check at a time: verify a patch, localize a failure, a zero-token fix.

`verify_patch.py` judges another agent's unified diff on a shadow copy
(`diffs.py` applies it with `git apply`); `diagnose.py` runs the tests and
localizes their failure or searches a single-edit fix. The MCP front end
(`mcp_server/`) calls these; they know nothing of any protocol.
"""
