#!/usr/bin/env bash
# The linter and the type checker, as CI runs them (scripts/test.sh calls this before pytest).
#
#   scripts/lint.sh        ruff on the whole tree, mypy on agent_core (--strict's checks on agent_core/pipeline), lsp_server
#                          (--strict's checks) and mcp_server
#
# Both read their configuration from pyproject.toml ([tool.ruff], [tool.mypy]).
set -euo pipefail
cd "$(dirname "$0")/.."
.venv/bin/ruff check .
.venv/bin/mypy
