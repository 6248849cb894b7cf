"""The safety gate's checks behind the `gate` node (pipeline/nodes/gate.py).

`scan.py` scans changed Python for code that should not run unasked,
`names.py` resolves what a name stands for through aliases, and `rigging.py`
refuses a change that patches what judges the tests.
"""
