"""The memory seam: what the planner and reflector may recall.

`NullMemory` remembers nothing (memory disabled, or the store is broken:
a run continues without memory). The SQLite store implements the same
Protocol; `factory.open_memory(settings)` picks one.
"""

from __future__ import annotations

from typing import Protocol

from pydantic import BaseModel, Field


class PastFailure(BaseModel):
    signature: str = Field(description="Normalised error signature.")
    error_type: str
    message: str
    fix: str | None = Field(default=None, description="What resolved it, when it was resolved.")
    similarity: float = 0.0


class PastPattern(BaseModel):
    task_type: str
    goal: str
    plan: str
    files: list[str] = Field(default_factory=list)
    outcome: str
    diff: str = Field(default="", description="The verified change (unified diff), hunks it did not need left out.")
    similarity: float = 0.0


class MemoryStore(Protocol):
    def similar_failures(self, signature: str, message: str, limit: int = 3) -> list[PastFailure]: ...

    def similar_patterns(self, goal: str, limit: int = 3) -> list[PastPattern]: ...

    def record_failure(self, signature: str, error_type: str, message: str) -> None: ...

    def resolve_failures(self, signatures: list[str], fix: str) -> None: ...

    def record_pattern(
        self, task_type: str, goal: str, plan: str, files: list[str], outcome: str, diff: str = "",
    ) -> None: ...


class NullMemory:
    """Remembers nothing."""

    def similar_failures(self, signature: str, message: str, limit: int = 3) -> list[PastFailure]:
        return []

    def similar_patterns(self, goal: str, limit: int = 3) -> list[PastPattern]:
        return []

    def record_failure(self, signature: str, error_type: str, message: str) -> None:
        return None

    def resolve_failures(self, signatures: list[str], fix: str) -> None:
        return None

    def record_pattern(
        self, task_type: str, goal: str, plan: str, files: list[str], outcome: str, diff: str = "",
    ) -> None:
        return None
