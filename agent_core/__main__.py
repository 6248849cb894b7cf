"""`python -m agent_core` is the `agentls` command."""

import sys

from agent_core.cli import main

sys.exit(main())
