"""The graph's nodes, one module each, named as `graph.py` names the node.

Each node is a plain async function `node(state, deps)` returning the state
keys it changes: `baseline`, `search`, `specify` (the tester's tests of the
goal), `plan`, `replan`, `code`, `gate`, `test`, `reflect`, `escalate`,
`verify` and `finalize`.
"""
