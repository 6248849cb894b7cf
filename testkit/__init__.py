"""What the tests and the benchmarks share: test doubles and sample projects, a package of its own.

- `scripted_llm` (with `scripted_faults` and `scripted_stream`): a scripted
  OpenAI-compatible HTTP server, its answers and faults queued per role;
- `project_support` and `runs_support`: small buggy projects, the CLI run
  helper and journal access;
- `containment_payloads`: hostile test files and the host-side checks of
  what they must not reach.

It is importable from the repository's root: pytest puts the root on the
path (`pythonpath` in pyproject.toml) and `python -m bench.<name>` runs from
there. It is not part of the agentls distribution.
"""
