"""Benchmarks: each module of this package is one, run from the repository's root as `python -m bench.<name>`.

The code they share lives in `bench.support`. Some benches drive the same
scripted OpenAI-compatible server and small projects as the tests: they
import them from the `testkit` package at the repository's root.
"""
