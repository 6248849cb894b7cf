"""The coder's helpers behind the `code` node (pipeline/nodes/code.py).

What the coder sees (`focus.py`: the suspicious functions whole, `suspects.py`:
which functions the failing tests point at), how its edits land in the shadow
(`edits.py`, `splice.py`), and sample-and-verify (`sampling.py`: several
answers per round, the tests pick).
"""
