"""Benchmarks: each module of this package is one, run from the repository's root as `python -m bench.<name>`.

The code they share lives in `bench.support`. Some benches drive the same
scripted OpenAI-compatible server and small projects as the tests; importing
this package makes those few test helpers importable (see
`bench.support.test_doubles`).
"""

from bench.support import test_doubles

test_doubles.install()
