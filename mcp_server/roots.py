"""Which projects a client may name: inside its MCP roots, within the server's `--root` directories.

A client that declares the roots capability is asked for its roots on each
tool call (the SDK's `ListRoots` resolver: a `roots/list` request on a
handshake connection, an input-required round on a 2026-07-28 one); only
`file://` roots count. The server's `--root` directories are an upper bound
when given (and always over HTTP, where they default to the working
directory): a client's roots may narrow them, never widen them, so a client
declaring `file:///` gets the `--root` directories, not the disk. A client
that declares no roots gets the `--root` directories (default: the working
directory). A path is resolved (symbolic links followed) before the check, so
a link inside a root that points out of it is refused.
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


def _within(path: Path, root: Path) -> bool:
    return path == root or root in path.parents


def narrowed(declared: list[Path], bound: list[Path]) -> list[Path]:
    """The part of the client's roots inside the server's: a root within a bound as it is, a wider one cut to the
    bounds it holds."""
    inside = [root for root in declared if any(_within(root, limit) for limit in bound)]
    cut = [limit for limit in bound if any(_within(limit, root) for root in declared)]
    return list(dict.fromkeys(inside + cut))


def root_paths(listed: ListRootsResult | None, fallback: list[Path], bounded: bool = True) -> list[Path]:
    """The directories a project must be inside: the client's file roots (within `fallback` when `bounded`), or
    `fallback` when it declared none."""
    if listed is None:
        return fallback
    paths = []
    for root in listed.roots:
        uri = urlparse(str(root.uri))
        if uri.scheme == "file" and uri.netloc in ("", "localhost"):
            paths.append(Path(unquote(uri.path)).resolve())
    return narrowed(paths, fallback) if bounded else paths


def check_project(project: str, listed: ListRootsResult | None, fallback: list[Path], bounded: bool = True) -> Path:
    """`project` resolved, when it is an existing directory inside an allowed root; a ToolError otherwise."""
    if not project or "\x00" in project:
        raise ToolError("project must be a directory path")
    path = Path(project).expanduser()
    if not path.is_absolute():
        raise ToolError(f"project must be an absolute path, got {project!r}")
    resolved = path.resolve()
    allowed = root_paths(listed, fallback, bounded)
    if not any(_within(resolved, root) for root in allowed):
        where = "the server's --root directories"
        if listed is not None:
            where = "the client's roots within " + where if bounded else "the client's roots"
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
