"""The fixtures of runs_fixtures.py (isolated environment, buggy project, `cli`) for tests/memory."""

from runs_fixtures import _isolated_env, cli, project  # noqa: F401  (fixtures, found by name)
