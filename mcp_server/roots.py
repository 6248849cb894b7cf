"""Which projects a client may name: inside its MCP roots, or under the server's `--root` directories.

A client that declares the roots capability is asked for its roots on each
tool call (the SDK's `ListRoots` resolver: a `roots/list` request on a
handshake connection, an input-required round on a 2026-07-28 one); only
`file://` roots count. A client that declares none gets the directories the
server was started with (`--root`, default its working directory). A path is
resolved (symbolic links followed) before the check, so a link inside a root
that points out of it is refused.
"""

from __future__ import annotations

from pathlib import Path
from urllib.parse import unquote, urlparse

from mcp.server.mcpserver import Context
from mcp.server.mcpserver.exceptions import ToolError
from mcp.server.mcpserver.resolve import ListRoots
from mcp.types import ListRootsResult


async def client_roots(ctx: Context) -> ListRoots | None:
    """Resolver: the client's roots when it declared the capability, else None (the server's own roots apply)."""
    capabilities = ctx.client_capabilities
    return ListRoots() if capabilities is not None and capabilities.roots is not None else None


def root_paths(listed: ListRootsResult | None, fallback: list[Path]) -> list[Path]:
    """The directories a project must be inside: the client's file roots, or `fallback` when it declared none."""
    if listed is None:
        return fallback
    paths = []
    for root in listed.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file" and uri.netloc in ("", "localhost"):
            paths.append(Path(unquote(uri.path)).resolve())
    return paths


def check_project(project: str, listed: ListRootsResult | None, fallback: list[Path]) -> Path:
    """`project` resolved, when it is an existing directory inside an allowed root; a ToolError otherwise."""
    if not project or "\x00" in project:
        raise ToolError("project must be a directory path")
    path = Path(project).expanduser()
    if not path.is_absolute():
        raise ToolError(f"project must be an absolute path, got {project!r}")
    resolved = path.resolve()
    allowed = root_paths(listed, fallback)
    if not any(resolved == root or root in resolved.parents for root in allowed):
        where = "the client's roots" if listed is not None else "the server's --root directories"
        shown = ", ".join(str(r) for r in allowed) or "none"
        raise ToolError(f"refused: {resolved} is outside {where} ({shown})")
    if not resolved.is_dir():
        raise ToolError(f"{resolved} is not a directory")
    return resolved


def check_file(project: Path, file: str) -> str:
    """`file` as a project-relative POSIX path, refused when it leaves the project."""
    candidate = Path(file)
    full = (candidate if candidate.is_absolute() else project / candidate).resolve()
    if project not in full.parents:
        raise ToolError(f"refused: {file} is outside the project {project}")
    if not full.is_file():
        raise ToolError(f"{file} is not a file of the project")
    return full.relative_to(project).as_posix()
