"""The `agentls fix` fixtures (engine_fixtures.py) for tests/workspace."""

from engine_fixtures import _isolated_env, project, run_fix  # noqa: F401  (fixtures, found by name)
