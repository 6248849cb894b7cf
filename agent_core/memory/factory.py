"""Pick the memory store from settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

from agent_core.memory.base import MemoryStore, NullMemory
from agent_core.memory.embeddings import Embedder, EndpointEmbedder, HashedNgramEmbedder
from agent_core.memory.sqlite_store import SQLiteMemory
from agent_core.settings import Settings


def default_memory_path(workspace: Path) -> Path:
    """The project's own memory, beside its runs and checkpoints: `<workspace>/.agentls/memory.sqlite`."""
    return Path(workspace) / ".agentls" / "memory.sqlite"


def open_memory(
    settings: Settings, on_error: Callable[[str], None] | None = None, workspace: Path | None = None,
) -> MemoryStore:
    """The configured store; NullMemory when disabled. Never raises for a broken database.

    The store belongs to one project (`default_memory_path`), so what one
    project learnt never reaches another; an explicit `memory.path` wins.
    Without either there is no store (never one shared by every project).
    """
    if not settings.memory.enabled:
        return NullMemory()
    if settings.memory.path:
        path = Path(settings.memory.path).expanduser()
    elif workspace is not None:
        path = default_memory_path(workspace)
    else:
        return NullMemory()
    embedder: Embedder = HashedNgramEmbedder()
    if settings.memory.embeddings == "endpoint" and settings.base_url:
        key = settings.api_key.get_secret_value() if settings.api_key else None
        embedder = EndpointEmbedder(settings.base_url, key, settings.model, settings.request_timeout_s)
    return SQLiteMemory(path, embedder, settings.memory.similarity_threshold, on_error=on_error)
