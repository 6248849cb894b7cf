"""Pick the memory store from settings."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import platformdirs

from agent_core.memory.base import MemoryStore, NullMemory
from agent_core.memory.embeddings import EndpointEmbedder, HashedNgramEmbedder
from agent_core.settings import Settings


def default_memory_path() -> Path:
    return Path(platformdirs.user_cache_dir("agentls")) / "memory.sqlite"


def open_memory(settings: Settings, on_error: Callable[[str], None] | None = None) -> MemoryStore:
    """The configured store; NullMemory when disabled. Never raises for a broken database."""
    if not settings.memory.enabled:
        return NullMemory()
    from agent_core.memory.sqlite_store import SQLiteMemory

    embedder = HashedNgramEmbedder()
    if settings.memory.embeddings == "endpoint" and settings.base_url:
        key = settings.api_key.get_secret_value() if settings.api_key else None
        embedder = EndpointEmbedder(settings.base_url, key, settings.model, settings.request_timeout_s)
    path = Path(settings.memory.path).expanduser() if settings.memory.path else default_memory_path()
    return SQLiteMemory(path, embedder, settings.memory.similarity_threshold, on_error=on_error)
