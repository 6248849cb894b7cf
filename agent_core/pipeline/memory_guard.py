"""A memory store wrapper that never lets a broken store break a run.

Memory is an aid: if the store raises, the run goes on without it and the
user is told once.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from agent_core.memory.base import MemoryStore, PastFailure, PastPattern


class GuardedMemory:
    """Delegates to `inner`; any exception disables memory for the rest of the run."""

    def __init__(self, inner: MemoryStore, notice: Callable[[str], None]) -> None:
        self.inner: MemoryStore | None = inner
        self.notice = notice

    def _call(self, name: str, default: Any, *args: Any) -> Any:
        if self.inner is None:
            return default
        try:
            return getattr(self.inner, name)(*args)
        except Exception as exc:  # noqa: BLE001 - any store failure: continue without memory
            self.inner = None
            self.notice(f"memory disabled for this run: {name} failed: {exc}")
            return default

    def similar_failures(self, signature: str, message: str, limit: int = 3) -> list[PastFailure]:
        found: list[PastFailure] = self._call("similar_failures", [], signature, message, limit)
        return found

    def similar_patterns(self, goal: str, limit: int = 3) -> list[PastPattern]:
        found: list[PastPattern] = self._call("similar_patterns", [], goal, limit)
        return found

    def record_failure(self, signature: str, error_type: str, message: str) -> None:
        self._call("record_failure", None, signature, error_type, message)

    def resolve_failures(self, signatures: list[str], fix: str) -> None:
        self._call("resolve_failures", None, signatures, fix)

    def record_pattern(
        self, task_type: str, goal: str, plan: str, files: list[str], outcome: str, diff: str = "",
    ) -> None:
        self._call("record_pattern", None, task_type, goal, plan, files, outcome, diff)
