"""Read-only resources: the recent runs of the projects this server has seen, and each run's journal.

`agentls://runs` lists them (JSON, newest first); `agentls://runs/{run_id}`
is one run's trace as Markdown, as `agentls trace` shows it. Only projects a
client named in a tool call (inside its roots) and the server's `--root`
directories are looked at.
"""

from __future__ import annotations

import json
from pathlib import Path

from mcp.server.mcpserver import MCPServer
from mcp.server.mcpserver.exceptions import ResourceError

from agent_core.errors import UnknownRun
from agent_core.journal.render import render_markdown
from agent_core.journal.trace import list_runs, summary_json
from mcp_server.deps import Deps

RECENT = 50


def _projects(deps: Deps) -> list[Path]:
    return sorted(deps.projects | set(deps.roots))


def register(server: MCPServer, deps: Deps) -> None:
    """Add the runs resources to `server`."""

    @server.resource("agentls://runs", name="runs", mime_type="application/json")
    def runs() -> str:
        """The recent runs (test, fix, gen-tests) of the projects this server has seen, newest first."""
        found = [summary_json(s) for project in _projects(deps) for s in list_runs(project, RECENT)]
        found.sort(key=lambda s: (s["started"], s["run_id"]), reverse=True)
        return json.dumps(found[:RECENT])

    @server.resource("agentls://runs/{run_id}", name="run", mime_type="text/markdown")
    def run(run_id: str) -> str:
        """One run's journal as Markdown: every phase, prompt, answer, tool call and test report."""
        for project in _projects(deps):
            try:
                return render_markdown(project, run_id)
            except UnknownRun:
                continue
        raise ResourceError(f"no run {run_id!r} in the projects this server has seen")
