"""The composition root: one MCP server with the tools and resources of this package."""

from __future__ import annotations

from pathlib import Path

from mcp.server.mcpserver import MCPServer

from agent_core import __version__
from mcp_server import resources, tools
from mcp_server.deps import Deps

INSTRUCTIONS = (
    "agentls checks code in its project's own environment, in a sandbox, with the project's own tests. "
    "verify_patch judges a unified diff (it never edits the project unless apply is true and it verified); "
    "run_tests, localize and quick_fix cost no model tokens; fix and gen_tests run the full pipeline."
)


def build_server(roots: list[Path], bounded: bool = True) -> MCPServer:
    """The server, its projects confined to the client's MCP roots (within `roots` when `bounded`), or else to
    `roots`."""
    server: MCPServer = MCPServer("agentls", version=__version__, instructions=INSTRUCTIONS, log_level="WARNING")
    deps = Deps(roots=[root.resolve() for root in roots], bounded=bounded)
    for feature in (tools, resources):
        feature.register(server, deps)
    return server
